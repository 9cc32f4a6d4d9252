import { execFileSync } from 'node:child_process';
import os from 'node:os';
import type { Pool } from '../src/db/pool';

/** What a result file needs to be read later: the machine, its load, and the software measured. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGb: number;
  kernel: string;
  node: string;
  temporalCli: string;
  postgres: string;
  /** 1, 5, 15-minute load averages when the run started and ended: a busy machine makes every figure worse. */
  loadAverageStart: number[];
  loadAverageEnd?: number[];
}

export async function machineInfo(cliPath: string, pool: Pool): Promise<MachineInfo> {
  let temporalCli = 'unknown';
  try {
    temporalCli = execFileSync(cliPath, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // an old CLI without --version: leave it unknown
  }
  const { rows } = await pool.query<{ version: string }>('SELECT version()');
  return {
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    node: process.version,
    temporalCli,
    postgres: (rows[0]?.version ?? 'unknown').split(' on ')[0] as string,
    loadAverageStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

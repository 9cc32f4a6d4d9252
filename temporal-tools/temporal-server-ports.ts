import net from 'node:net';
import { MAX_MEMBERSHIP_PORT, standardPorts, type ServerPorts } from './temporal-server-config';

/**
 * A port free right now, below 32768: the server records membership ports in cluster_membership.rpc_port, a
 * Postgres smallint, and dies on anything above (UpsertClusterMembership "out of range for type smallint").
 * Staying under Linux's ephemeral range (32768-60999) also keeps clear of ports the OS hands out on its own.
 */
async function freeLowPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i += 1) {
    const port = LOW_PORTS.min + Math.floor(Math.random() * (LOW_PORTS.max - LOW_PORTS.min));
    if (!taken.has(port) && (await canBind(port))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${LOW_PORTS.min} and ${LOW_PORTS.max}`);
}

const LOW_PORTS = { min: 20_000, max: MAX_MEMBERSHIP_PORT };

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * With a frontend port: Temporal's standard layout around it (so a restart on that port reuses every port),
 * each one that is busy or out of range replaced by a free one. Without: free ports throughout.
 */
export async function choosePorts(frontendGrpc: number | undefined): Promise<ServerPorts> {
  const taken = new Set<number>(frontendGrpc === undefined ? [] : [frontendGrpc]);
  const wanted: Partial<ServerPorts> = frontendGrpc === undefined ? {} : standardPorts(frontendGrpc);
  const chosen = {} as ServerPorts;
  for (const key of PORT_KEYS) {
    if (key === 'frontendGrpc' && frontendGrpc !== undefined) {
      chosen[key] = frontendGrpc; // as asked, even if busy: the server's own error says so
      continue;
    }
    const preferred = wanted[key];
    const limit = key.endsWith('Membership') ? MAX_MEMBERSHIP_PORT : 65_535;
    const usable =
      preferred !== undefined &&
      preferred > 1024 &&
      preferred <= limit &&
      !taken.has(preferred) &&
      (await canBind(preferred));
    if (usable) taken.add(preferred);
    chosen[key] = usable ? preferred : await freeLowPort(taken);
  }
  return chosen;
}

const PORT_KEYS: (keyof ServerPorts)[] = [
  'frontendGrpc',
  'frontendHttp',
  'frontendMembership',
  'historyGrpc',
  'historyMembership',
  'matchingGrpc',
  'matchingMembership',
  'workerGrpc',
  'workerMembership',
];

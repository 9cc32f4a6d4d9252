import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(__dirname, '..', '..', '..');

function diagnosticsOf(file: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  const program = ts.createProgram([file], { ...config.options, noEmit: true });
  return ts
    .getPreEmitDiagnostics(program, program.getSourceFile(file))
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe("the receiver kit's event types", () => {
  it("are exactly the shapes the engine's event schemas define", () => {
    expect(diagnosticsOf(path.join(__dirname, 'event-types.assertions.ts'))).toEqual([]);
  }, 120_000);

  it('would be caught drifting: a field made optional, or one added, does not compile', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kit-drift-'));
    try {
      const file = path.join(dir, 'drift.ts');
      const from = (rel: string) => JSON.stringify(path.join(ROOT, rel));
      writeFileSync(
        file,
        [
          `import type { SameShape } from ${from('test/helpers/type-equality')};`,
          `import type { Parcel } from ${from('src/receiver/index')};`,
          'type Looser = Omit<Parcel, "pickup_run_id"> & { pickup_run_id?: string };',
          'type Wider = Parcel & { weight_kg?: number };',
          'export const looser: SameShape<Parcel, Looser> = true;',
          'export const wider: SameShape<Parcel, Wider> = true;',
          'export const same: SameShape<Parcel, Omit<Parcel, "id"> & { id: string }> = true;',
        ].join('\n'),
      );
      const errors = diagnosticsOf(file);
      expect(errors).toHaveLength(2);
      for (const error of errors) expect(error).toMatch(/Type 'true' is not assignable to type 'false'/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

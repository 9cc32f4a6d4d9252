'use strict';
// `npm run fuzz -- --runs N [--seed S] [--stats]`: the property-based API suite (test/integration/api/fuzz.test.ts)
// with more runs per route than `npm test` gives it, on a fresh seed unless one is given (printed, to replay a
// failure). --stats prints how often each route answered each status and error code.
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { root } = require('./ensure-install');

function parse(argv) {
  const options = { runs: 1000, seed: Math.floor(Math.random() * 2 ** 31), stats: false };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      const text = argv[(i += 1)];
      if (!/^\d+$/.test(text ?? '')) throw new Error(`${arg} takes a whole number`);
      return Number(text);
    };
    if (arg === '--runs') options.runs = value();
    else if (arg === '--seed') options.seed = value();
    else if (arg === '--stats') options.stats = true;
    else throw new Error(`unknown option ${arg}; usage: npm run fuzz -- --runs N [--seed S] [--stats]`);
  }
  if (options.runs < 1) throw new Error('--runs must be at least 1');
  return options;
}

let options;
try {
  options = parse(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`fuzz: ${err.message}\n`);
  process.exit(2);
}
process.stdout.write(`fuzz: ${options.runs} runs per route and kind, seed ${options.seed}\n`);
const env = {
  ...process.env,
  FUZZ_RUNS: String(options.runs),
  FUZZ_SEED: String(options.seed),
  ...(options.stats ? { FUZZ_STATS: '1' } : {}),
};
try {
  execFileSync(path.join(root, 'node_modules', '.bin', 'vitest'), ['run', 'test/integration/api/fuzz.test.ts'], {
    cwd: root,
    stdio: 'inherit',
    env,
  });
} catch (err) {
  process.stderr.write(`fuzz: failed; replay with npm run fuzz -- --runs ${options.runs} --seed ${options.seed}\n`);
  process.exit(typeof err.status === 'number' ? err.status : 1);
}

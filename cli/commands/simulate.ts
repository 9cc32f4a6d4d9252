import type { Command } from 'commander';
import type { CliContext } from '../context';

// Filled in by its issue; registered from cli/index.ts so the wiring is in place.
export function registerSimulate(_program: Command, _ctx: CliContext): void {}

'use strict';
// Plain JavaScript with no dependencies, like the other scripts `npm start` runs before node_modules exists.

/**
 * The Node.js lines in support, each with the day its maintenance ends (nodejs.org's release schedule). The
 * engines field of package.json admits the newest line past its end too, since many machines still have it and
 * npm would otherwise warn on every install there: everything still runs on it, and `npm start` says so.
 */
const SUPPORTED_LINES = [
  { major: 22, endOfLife: '2027-04-30' },
  { major: 24, endOfLife: '2028-04-30' },
];
/** Lines past their end that still run everything. */
const ENDED_LINES = [{ major: 20, endOfLife: '2026-04-30' }];

/** One line to print at start, or undefined on a line in support. `version` is `process.version`'s form. */
function nodeLineNotice(version) {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (SUPPORTED_LINES.some((line) => line.major === major)) return undefined;
  const ended = ENDED_LINES.find((line) => line.major === major);
  const install = `install Node ${SUPPORTED_LINES.at(-1).major} LTS (or ${SUPPORTED_LINES[0].major})`;
  if (ended) return `Node ${major} reached its end of life on ${ended.endOfLife}: ${install}; it still runs for now.`;
  return `Node ${version} is not a line this service is tested on: ${install}.`;
}

module.exports = { SUPPORTED_LINES, ENDED_LINES, nodeLineNotice };

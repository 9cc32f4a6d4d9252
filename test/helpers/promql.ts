/**
 * The metric names a PromQL expression reads, for checking alert rules and dashboards against what the code
 * registers. Not a parser: it drops strings, label matchers, ranges and grouping clauses, then keeps the
 * identifiers that are not functions or keywords. Enough for the expressions in deploy/.
 */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);

export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const name = match[0];
    const next = stripped.slice((match.index ?? 0) + name.length).trimStart();
    if (next.startsWith('(') || KEYWORDS.has(name.toLowerCase())) continue;
    // 1e3 and friends: a letter inside a number literal.
    if (/[0-9.]$/.test(stripped.slice(0, match.index ?? 0))) continue;
    names.add(name);
  }
  return [...names];
}

/** A histogram's series carry suffixes; the registered name is the base. */
export function baseName(name: string): string {
  return name.replace(/_(bucket|sum|count)$/, '');
}

/** An Altair spec's one named dataset apart from the rest (its `shape`), or null when
 * it has another form: two specs of one shape differ only in their numbers. */
export function splitData(spec: unknown): { shape: string; name: string; values: unknown[] } | null {
  if (spec === null || typeof spec !== 'object') {
    return null;
  }
  const { datasets, data, ...rest } = spec as {
    datasets?: { [name: string]: unknown[] };
    data?: { name?: string };
  };
  const names = Object.keys(datasets ?? {});
  if (datasets === undefined || names.length !== 1 || data?.name !== names[0]) {
    return null;
  }
  return { shape: JSON.stringify(rest), name: names[0], values: datasets[names[0]] };
}

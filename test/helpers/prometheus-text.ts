// Reads the Prometheus text exposition format a /metrics scrape answers, for assertions on single samples.

/** One scrape: every sample by name and labels. */
export interface Scrape {
  /** The sample's value; 0 when the series is absent (a counter that never moved). */
  value(name: string, labels?: Record<string, string>): number;
  /** Every label set of `name` seen, e.g. to check that no label holds a client id. */
  labelSets(name: string): Array<Record<string, string>>;
  readonly text: string;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function key(name: string, labels: Record<string, string>): string {
  return `${name}{${Object.keys(labels).sort().map((k) => `${k}=${JSON.stringify(labels[k])}`).join(',')}}`;
}

/** Parses the text format (comments skipped, label values unescaped). */
export function parseScrape(text: string): Scrape {
  const values = new Map<string, number>();
  const sets = new Map<string, Array<Record<string, string>>>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText = '', value] = match as unknown as [string, string, string | undefined, string];
    const labels: Record<string, string> = {};
    for (const [, label, raw] of labelText.matchAll(LABEL)) labels[label!] = JSON.parse(`"${raw!}"`) as string;
    values.set(key(name, labels), Number(value));
    sets.set(name, [...(sets.get(name) ?? []), labels]);
  }
  return {
    text,
    value: (name, labels = {}) => values.get(key(name, labels)) ?? 0,
    labelSets: (name) => sets.get(name) ?? [],
  };
}

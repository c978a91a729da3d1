/** What the live-control views say, as plain functions (tested without a DOM). */
import type { IBreakpointItem, IHitItem, IPauseResult, Tagged } from '../comm/protocol';

/** `"#0 condition on detect, partition 3"`, `"#1 count on enrich: 1000"`. */
export function where(hit: IHitItem): string {
  const place = hit.partition === null ? `: ${hit.total ?? ''}` : `, partition ${hit.partition}`;
  const error = hit.error ? ` (${String(hit.error['exception'] ?? 'error')})` : '';
  return `#${hit.index} ${hit.kind}${error} on ${hit.operator}${place}`;
}

/** `"detect: row.x > 1 · 2 hits"`, `"enrich: sum(row.amount) ≥ 5000000 · 0 hits · off"`. */
export function breakpointText(bp: IBreakpointItem): string {
  const what =
    bp.kind === 'condition' ? (bp.when ?? '') : `${bp.kind}${bp.sum_of ? `(${bp.sum_of})` : ''} ≥ ${bp.target ?? ''}`;
  const hits = bp.hits === 1 ? '1 hit' : `${bp.hits} hits`;
  return `${bp.operator}: ${what} · ${hits}${bp.armed ? '' : ' · off'}`;
}

/** `"Paused: 8 task(s) held in 12 ms"` (and how many had not answered). */
export function pauseText(result: IPauseResult): string {
  const late = result.pending ? `, ${result.pending} not yet` : '';
  return `Paused: ${result.acknowledged} task(s) held in ${(result.seconds * 1000).toFixed(0)} ms${late}`;
}

/** The editor's text as the replacement record (tagged JSON), or why it is not one. */
export function parseReplacement(text: string): { record: Tagged } | { error: string } {
  try {
    return { record: JSON.parse(text) as Tagged };
  } catch (error) {
    return { error: `The record is not JSON: ${(error as Error).message}` };
  }
}

/** What the operators table says, without the DOM (tested in jest). */
import type { IOperatorNode, IOperatorProgress, IRunError, IRunSummary } from '../comm/protocol';
import { formatRate, plural } from '../widgets/format';

/** The tooltip of an operator's name: its name as the kernel gives it, status, API, phase, role. */
export function operatorTitle(p: IOperatorProgress, status: string, node: IOperatorNode | undefined): string {
  const phase =
    p.phase === 'combine'
      ? ', the map side (combine) of a key-based aggregation'
      : p.phase === 'merge'
        ? ', the reduce side (merge) of a key-based aggregation'
        : p.phase
          ? `, phase ${p.phase}`
          : '';
  const role = node?.theta ? ', θ' : node?.in_g ? ', in G(θ)' : '';
  return `${p.operator}: ${status}` + (node?.api ? ` (${node.api})` : '') + phase + role;
}

/** What the Parts cell says, in words: "4 partitions done", "2 done, 1 running, 1 failed". */
export function partsText(p: IOperatorProgress): string {
  const parts = [`${p.done} done`];
  if (p.running) {
    parts.push(`${p.running} running`);
  }
  if (p.failed) {
    parts.push(`${p.failed} failed`);
  }
  const total = p.done + p.running + p.failed;
  return `${plural(total, 'partition')}: ${parts.join(', ')}`;
}

/**
 * The Rate cell: the live rate over the running partitions while the operator runs,
 * else its average over its run (`average_rate`), marked as such.
 */
export function operatorRate(
  summary: IRunSummary,
  p: IOperatorProgress
): { text: string; title: string; average: boolean } {
  if (operatorStatus(summary, p) === 'running') {
    return {
      text: formatRate(p.rate),
      title: 'records in per second now, over the running partitions',
      average: false
    };
  }
  const average = p.average_rate ?? 0;
  return {
    text: formatRate(average),
    title:
      average > 0 ? "records in per second on average, from its first partition's start to its last one's end" : '',
    average: true
  };
}

/** `failed`, `running`, `done`, `pending` (not started while the run goes on) or `not run`. */
export function operatorStatus(summary: IRunSummary, p: IOperatorProgress): string {
  if (p.failed > 0 || (summary.error && summary.error.operator === p.operator)) {
    return 'failed';
  }
  if (p.running > 0) {
    return 'running';
  }
  if (summary.status === 'running') {
    return p.done > 0 ? 'running' : 'pending';
  }
  return p.done > 0 ? 'done' : 'not run';
}

/** A run store's path for a narrow line: its last two folders (`…/runs/<id>`). */
export function shortPath(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts.length > 2 ? `…/${parts.slice(-2).join('/')}` : path;
}

/** The error card's title: a failed run failed there; a running or finished run only had
 * a task fail there (Spark retries a failed task; a finished run's retry succeeded). */
export function errorTitle(error: IRunError, status: string): string {
  const where: string[] = [];
  if (error.operator !== null && error.operator !== undefined) {
    where.push(`operator ${error.operator}`);
  }
  if (error.partition !== null && error.partition !== undefined) {
    where.push(`partition ${error.partition}`);
  }
  const place = where.length ? ` in ${where.join(', ')}` : '';
  if (status === 'failed') {
    return `Failed${place}`;
  }
  if (status === 'running') {
    return `A task failed${place}; Spark may retry it`;
  }
  if (status === 'finished') {
    return `A task failed${place}; Spark retried it and the run finished`;
  }
  return `A task failed${place}`;
}

import type { RequestMethod, RunStatus } from '../src/comm/protocol';

/**
 * A kernel's replies to the runs model's own requests when it has one run, `r1`:
 * `runs.list` and `run.get` (undefined for any other method: the test's fake answers).
 */
export function oneRunReply(method: RequestMethod, status: RunStatus): unknown {
  const run = { id: 'r1', status, started: 1, ended: null, duration: 1, cell: 'x', path: '/r1', operators: 2 };
  switch (method) {
    case 'runs.list':
      return { runs: [run] };
    case 'run.get':
      return {
        ...run,
        dag: { operators: [], edges: [], stages: {} },
        progress: [],
        error: null,
        warnings: [],
        alerts: []
      };
  }
  return undefined;
}

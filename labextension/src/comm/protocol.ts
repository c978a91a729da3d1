/**
 * Messages of the `icedtea` comm between JupyterLab and the kernel.
 *
 * Their one schema is `icedtea_jupyter/comm/protocol.json`: `test/protocolSchema.spec.ts`
 * reads the interfaces below with the TypeScript checker and fails unless every
 * request's params and result and every event's data match it field by field (the
 * kernel's side is checked against the same file). A Python test also parses the two
 * literal arrays below, so keep them literal arrays of strings.
 */

/** The comm target the kernel registers with `%load_ext icedtea_jupyter`. */
export const COMM_TARGET = 'icedtea';

/** The protocol version this frontend speaks (`hello` returns the kernel's). */
export const PROTOCOL_VERSION = 1;

export const REQUEST_METHODS = [
  'hello',
  'runs.list',
  'run.get',
  'run.partitions',
  'run.open',
  'run.interactions',
  'run.interact',
  'run.snapshot',
  'run.state',
  'run.page',
  'debug.view',
  'debug.jump',
  'debug.jump_to_failure',
  'debug.jump_to',
  'debug.step_over',
  'debug.step_into',
  'debug.step_out',
  'debug.state',
  'debug.cancel',
  'debug.progress',
  'run.actions',
  'skew.report',
  'lineage.outputs',
  'lineage.trace_back',
  'lineage.trace_forward',
  'lineage.records',
  'versions.list',
  'versions.diff',
  'run.export',
  'control.get',
  'control.pause',
  'control.resume',
  'control.live_state',
  'control.add_breakpoint',
  'control.remove_breakpoint',
  'control.decide',
  'lineage.replay',
  'samples.get',
  'summaries.compare',
  'alerts.groups'
] as const;

export const EVENT_TYPES = [
  'run.added',
  'run.progress',
  'run.status',
  'run.alert',
  'run.interaction',
  'debug.moved',
  'debug.preparing',
  'run.action',
  'run.control',
  'skew.changed'
] as const;

export type RequestMethod = (typeof REQUEST_METHODS)[number];
export type EventType = (typeof EVENT_TYPES)[number];

export type RunStatus = 'running' | 'finished' | 'failed' | 'stopped' | 'interrupted';

/** What the runs list shows of a run (`handlers.run_item`). */
export interface IRunListItem {
  id: string;
  status: RunStatus;
  /** Epoch seconds. */
  started: number;
  ended: number | null;
  /** Seconds; for a running run, up to the time the item was made. */
  duration: number;
  /** First non-blank line of the recorded cell. */
  cell: string;
  /** Directory of the run's store. */
  path: string;
  /** Number of Python operators. */
  operators: number;
}

/** One node of the pipeline's DAG. */
export interface IOperatorNode {
  id: number;
  name: string;
  /** `"python"` (hosted, with metrics) or `"jvm"` (opaque). */
  kind: string;
  api: string;
  parents: number[];
  phase: string;
  named: boolean;
  /** The interesting operator θ (absent from kernels before time travel). */
  theta?: boolean;
  /** In G(θ): θ or downstream of it. */
  in_g?: boolean;
  /** Partitions of the RDD it produces, when known. */
  partitions?: number | null;
  /** A union: the partitions of each input, in order. */
  input_partitions?: number[] | null;
  /** A join or cogroup: each input's node id, in argument order. */
  inputs?: number[] | null;
  /** Applied straight to its parent's records in the same Python worker. */
  chained?: boolean;
  /** A join or cogroup of inputs partitioned alike: no shuffle. */
  copartitioned?: boolean;
  /** A JVM shuffle whose reduce side is read in a worker host: it has loads per partition. */
  hosted?: boolean;
}

export interface IDag {
  operators: IOperatorNode[];
  /** `[upstream name, downstream name]` pairs. */
  edges: [string, string][];
  /** Stage id -> operator names. */
  stages: { [stage: string]: string[] };
}

/** Live counts of one Python operator (`Run.progress`). */
export interface IOperatorProgress {
  /** The operator's name. */
  operator: string;
  phase: string;
  records_in: number;
  records_out: number;
  /** Partitions done, running and failed. */
  done: number;
  running: number;
  failed: number;
  /** Records per second over the running partitions. */
  rate: number;
  /** Records in per second from its first partition's start to its last one's end (or now). */
  average_rate: number;
}

export interface IRecordSample {
  repr: string;
  value?: unknown;
  type?: string;
}

/** The error that failed a run. */
export interface IRunError {
  operator?: string | null;
  partition?: number | null;
  exception?: string | null;
  message?: string | null;
  traceback?: string | null;
  record?: IRecordSample | null;
  [key: string]: unknown;
}

/** An agent's alert; its fields depend on the agent. */
export interface IAlert {
  [key: string]: unknown;
}

/** One record of a group of alerts: its repr, partition and the alert's message. */
export interface IAlertRecord {
  repr: string;
  partition: number | null;
  message: string;
}

/** The alerts of one tool, check and operator (`run.alert_groups()`). */
export interface IAlertGroup {
  /** The agent (or part of one) that raised them: check, tolerate, latency… */
  tool: string;
  check: string | null;
  operator: string | null;
  /** `error` if any of them is an error, else the first one's level. */
  level: string;
  /** The failures they stand for (sampled tools count the ones they did not send). */
  count: number;
  /** The alerts received. */
  alerts: number;
  /** The first alert's message. */
  message: string;
  records: IAlertRecord[];
}

export interface IRunSummary {
  id: string;
  status: RunStatus;
  started: number;
  ended: number | null;
  duration: number;
  /** The whole recorded cell. */
  cell: string;
  path: string;
  dag: IDag;
  progress: IOperatorProgress[];
  error: IRunError | null;
  warnings: string[];
  alerts: IAlert[];
}

/** One task attempt of one operator (`Run.partitions`). */
export interface IPartitionRow {
  /** The operator's id in the DAG. */
  operator: number;
  partition: number;
  stage: number;
  attempt: number;
  task?: number | null;
  status: string;
  records_in: number | null;
  records_out: number | null;
  rate?: number | null;
  [key: string]: unknown;
}

/**
 * A value from user data (a record, a state variable) as the tagged JSON of
 * `icedtea_jupyter/executor/state.py::encode`; `tagged.ts` reads it.
 */
export type Tagged = unknown;

/** What made an interaction: the start of the run, a button or API call, a timer, a condition. */
export type TriggerKind = 'initial' | 'manual' | 'periodic' | 'condition';

/** One moment of a run when a tuple-consistent snapshot of G(θ) was taken. */
export interface IInteraction {
  index: number;
  /** Epoch seconds. */
  time: number;
  trigger: TriggerKind | string;
  /** Whether every worker of G(θ) has reported its state. */
  complete: boolean;
  /** Seconds from the request to the complete snapshot. */
  latency: number | null;
  /** θ's input record that met the condition (condition interactions). */
  record: Tagged | null;
}

/** What changed in a worker's state since the previous snapshot (or debugger view). */
export interface IChanged {
  /** Variables set or replaced. */
  variables: string[];
  removed: string[];
  /** Dict-like variables: the keys set or replaced (tagged). */
  keys: { [variable: string]: Tagged[] };
}

/** One worker of G(θ) at an interaction. */
export interface ISnapshotWorker {
  operator: string;
  partition: number;
  /** "running", "not started", "finished", "outside θ's chain", "no snapshot". */
  status: string;
  count: number | null;
}

export interface ISnapshotResult {
  run: string;
  index: number;
  trigger: string;
  workers: ISnapshotWorker[];
}

export interface IStateResult {
  state: { [variable: string]: Tagged } | null;
  changed: IChanged;
  status: string;
  count: number | null;
}

/** One page of a large state variable. */
export interface IPageResult {
  total: number | null;
  start: number;
  items: Tagged[];
  note?: string;
}

/** The records waiting at one worker of the debugger. */
export interface IPendingAt {
  count: number;
  /** The first (up to 20) waiting records. */
  records: Tagged[];
  /** The θ input each of them descends from. */
  scopes: number[];
  /** θ's records that are batches or groups (DataFrame operators): each one's rows,
   * `[start, stop)` in the partition. */
  rows?: number[][];
}

/** The debugger of a run after a jump or a step. */
export interface IDebugView {
  run: string;
  /** The interaction jumped to; null once steps moved away from it. */
  index: number | null;
  /** What brought it here, for people: "jump to I1", "step over on partition 0". */
  step: string;
  /** The partition of the last step; null after a jump. */
  partition: number | null;
  /** The operator the last step stepped into; null after other moves. */
  operator: string | null;
  /** The operators replayed, upstream (θ) first. */
  chain: string[];
  workers: { operator: string; partition: number; count: number }[];
  /** Partition -> operator -> waiting records. */
  pending: { [partition: string]: { [operator: string]: IPendingAt } };
  options: {
    step_over: number;
    step_into: number;
    /** Partition -> why a step-over is impossible there (scopes would interleave). */
    refused: { [partition: string]: string };
    /** θ's partitions whose tree has ended: nothing is left to step over there. */
    ended: number[];
  };
  /** What left the chain in the last step. */
  outputs: Tagged[];
  notes: string[];
  /**
   * Set when the last jump was made while time travel was still being prepared:
   * "time travel is still being prepared (40%): this jump replayed from I0".
   */
  preparing?: string | null;
  /** The interaction of the parked fork the last jump started from. */
  started_from?: number | null;
  /**
   * The recorded run's exception, once a step reproduced it on the culprit record
   * (`dbg.jump_to_failure()`, then Over): that partition has ended there.
   */
  failure?: IReplayedFailure | null;
}

/** The recorded run's failure as replay reproduced it. */
export interface IReplayedFailure {
  operator: string;
  partition: number;
  /** The culprit's index among the operator's inputs on the partition. */
  index: number;
  exception: string;
  message: string;
  traceback: string;
}

/**
 * The preparation of a run's time travel: after the run ends, a background phase
 * replays it once and parks fork checkpoints. Until it is `ready`, jumps still work
 * but may be slower.
 */
export interface IReplayProgress {
  /** waiting: only I0 is parked until dbg.prepare() (a debugger made with prepare_now=False). */
  state: 'starting' | 'waiting' | 'preparing' | 'ready' | 'failed';
  /** Interactions replayed so far, out of `of`. */
  done: number;
  of: number;
  /** Why it failed (`failed`). */
  error?: string;
}

export interface IDebugStateResult {
  state: { [variable: string]: Tagged } | null;
  changed: IChanged;
}

/** One entry of a run's action log: the Python call equivalent to a UI action. */
export interface IAction {
  time: number;
  source: 'sidebar' | 'panel' | 'api' | string;
  call: string;
}

/** One version of a cell (`session/versions.versions_frame`, one row). */
export interface IVersionRow {
  version: string;
  run: string;
  /** Epoch seconds. */
  started: number;
  duration: number;
  status: string;
  /** What changed since the version before ("first version" for the first). */
  changed: string;
  /** The result's digests, shortened (null: the run stored no result). */
  result: string | null;
  same_result_as: string | null;
  reused_from: string | null;
  bytes_stored: number;
}

/** One action's results in two versions (`versions/diff.ResultDiff`). */
export interface IResultChange {
  action: string;
  same: boolean;
  here: string | null;
  there: string | null;
  only_here: Array<{ [column: string]: unknown }> | null;
  only_there: Array<{ [column: string]: unknown }> | null;
}

/** What changed between two versions (`versions/diff.VersionDiff.to_json`). */
export interface IVersionDiff {
  here: string;
  there: string;
  added: string[];
  removed: string[];
  changed: { [operator: string]: string[] };
  /** Per changed operator, its named values that changed ("Gap.GAP: 10 → 3"). */
  values: { [operator: string]: string[] };
  /** The session's result-changing settings that changed ("spark.sql.x: a → b"). */
  settings: string[];
  sources: string[];
  code: string;
  summary: string;
  results: IResultChange[];
  /** Each Python operator's records in and out in both versions (null: not in one). */
  counts: IOperatorCounts[];
}

/** One operator's records in two versions (`session/versions.side_by_side`). */
export interface IOperatorCounts {
  operator: string;
  here_in: number | null;
  here_out: number | null;
  there_in: number | null;
  there_out: number | null;
}

/** Requests that act on a run carry where they come from, for its action log. */
export interface IActionParams {
  run: string;
  source?: 'sidebar' | 'panel';
}

/** One record of a run's lineage: at `operator`'s output, its id (partition, position). */
export interface ILineageRecord {
  operator: string;
  partition: number;
  position: number;
  record: Tagged;
}

/** A page of lineage records: a trace's (at `operator`, or where it ends: null) or the outputs'. */
export interface ILineagePage {
  operator: string | null;
  /** Records in all (after the filter, for the outputs). */
  total: number;
  start: number;
  rows: ILineageRecord[];
}

/** A backward trace's selective replay: the cell's last operator's outputs on its sources only. */
export interface ILineageReplay {
  run: string;
  trace: number;
  /** The Python call it is (the action log has it). */
  call: string;
  /** Outputs in all; `outputs` holds the first of them. */
  total: number;
  outputs: Tagged[];
}

/** A backward or forward trace the kernel keeps under `trace` for its pages and jumps. */
export interface ILineageTrace {
  run: string;
  trace: number;
  direction: 'back' | 'forward';
  /** The engine of its joins: "duckdb". */
  engine: string;
  /** The record traced from. */
  from: ILineageRecord;
  /** The Python call it is (the action log has it). */
  call: string;
  /** The operators it reached, in the DAG's order, with its records at each. */
  operators: { operator: string; count: number }[];
  /** Records where it ends: source records (back), output rows (forward). */
  total: number;
  /** What could not be traced, how links were made where none were captured. */
  notes: string[];
  /** The first page of the records where it ends. */
  page: ILineagePage;
}

/** A breakpoint set on a run (`control/hits.py` `Breakpoint`). */
export interface IBreakpointItem {
  id: number;
  operator: string;
  /** `condition`, or a global one: `count`, `sum`. */
  kind: string;
  when: string | null;
  sum_of: string | null;
  target: number | null;
  armed: boolean;
  hits: number;
}

/** A breakpoint met (`control/hits.py` `Hit`). */
export interface IHitItem {
  index: number;
  /** `condition`, `error`, `count` or `sum`. */
  kind: string;
  operator: string;
  partition: number | null;
  breakpoint: number | null;
  record: Tagged;
  state: { [variable: string]: Tagged };
  error: { [key: string]: unknown } | null;
  total: number | null;
  time: number;
  /** Null while the user has not decided: skip, replace, resume or stop. */
  decision: string | null;
  input_index: number;
  /** The decisions this hit allows (a whole-partition function that raised: resume, stop). */
  actions?: string[];
  /** Why the other decisions are not offered. */
  refused?: string;
}

/** A run's live control (`comm/control.py` `control_view`). */
export interface IControlView {
  run: string;
  running: boolean;
  paused: boolean;
  stopped: boolean;
  breakpoints: IBreakpointItem[];
  hits: IHitItem[];
}

export interface IPauseResult {
  seconds: number;
  acknowledged: number;
  pending: number;
}

export interface IHelloResult {
  protocol: number;
  version: string;
}

export interface IPartitionsResult {
  run: string;
  operator: string;
  partitions: IPartitionRow[];
}

/** One partition's load (`SkewReport.partitions`): `key_records` for key-partitioned operators. */
export interface ISkewPartition {
  partition: number;
  records: number;
  bytes: number;
  seconds: number;
  /** Only while the run records: a worker of the partition is running. */
  running?: boolean;
  /** The records the partition's keys carry (heavy keys counted, the rest estimated). */
  key_records?: number;
  /** Only while the run records: the bytes Spark knows the partition still has to read
   * (null where it knows none). */
  waiting?: number | null;
}

/** A heavy key. `exact`: its true count is within `count` and `count + error` (a bound).
 * Else `count` is an estimate and `low`–`high` a statistical interval (the report's
 * `bound` says at what confidence); `error` is its larger distance from `count`. */
export interface ISkewKey {
  /** The key's Python repr. */
  key: string;
  count: number;
  share: number;
  partition: number;
  error: number;
  low: number;
  high: number;
  exact: boolean;
}

/** A partition a skew rule flags, and why (the rule with its numbers). */
export interface ISkewFlag {
  partition: number;
  load: number;
  rule: 'reshape' | 'aqe';
  why: string;
}

/** A remedy, its code, and the heaviest partition's load before and after. */
export interface ISkewAdvice {
  remedy: string;
  why: string;
  code: string;
  heaviest: number;
  after: number;
  shrink: number;
}

/** `run.skew(operator)` for the sidebar (`SkewReport.to_json`). */
export interface ISkewReport {
  run: string;
  operator: string;
  /** The operators a skew view can show. */
  operators: string[];
  api: string;
  live: boolean;
  /** The run was recorded with --skew (heavy keys were counted). */
  recorded: boolean;
  /** The load the skew test used: records, bytes, seconds or key_records. */
  load: string;
  partitions: ISkewPartition[];
  keys: ISkewKey[];
  error: number;
  records: number;
  /** Records whose keys were sampled, not all counted (their counts are estimates). */
  estimated: number;
  /** What the key counts are (exact, lower bounds or estimates), in words. */
  bound: string;
  /** Why the partitions have no `waiting` while the run records, if so (else ""). */
  waiting_note: string;
  skewed: ISkewFlag[];
  parameters: { [name: string]: unknown };
  advice: ISkewAdvice[];
  /** The chart's Vega-Lite spec (Altair's). */
  spec: unknown;
  /** The heat map's spec: records in of every Python operator on every partition. */
  heatmap: unknown;
  /** The load over time's spec: the records each partition has taken in so far, on a
   * time grid (`ISkewPoint` rows, one dataset; empty while the run starts). */
  timeline: unknown;
  /** Why there is no load over time, if so (else ""). */
  timeline_note: string;
}

/** A stacked bar of the skew chart: one heavy key's records in a partition (`other`: the rest). */
export interface ISkewBar {
  partition: number;
  segment: string;
  load: number;
  skewed: boolean;
}

/** A cell of the skew heat map: an operator's records in on a partition; over 40
 * partitions, a column of several (`partition` to `last`) showing its `heaviest`. */
export interface ISkewCell {
  operator: string;
  partition: number;
  records_in: number;
  seconds: number;
  last?: number;
  heaviest?: number;
}

/** A point of the load over time: the records a series (`partition 3`, `other partitions
 * (median)`) has taken in by `seconds` into the run; its identity is (series, seconds). */
export interface ISkewPoint {
  seconds: number;
  series: string;
  records: number;
}

/** The rows of a live skew view changed since the last `skew.changed` event (rows put by
 * their identity, identities taken away), and the short lists and counts that changed. */
export interface ISkewChanges {
  partitions: ISkewPartition[];
  removed_partitions: number[];
  bars: ISkewBar[];
  removed_bars: [number, string][];
  cells: ISkewCell[];
  removed_cells: [string, number][];
  timeline: ISkewPoint[];
  /** The load over time's points taken away: (series, seconds). */
  removed_timeline: [string, number][];
  keys?: ISkewKey[];
  skewed?: ISkewFlag[];
  error?: number;
  records?: number;
  estimated?: number;
  bound?: string;
  waiting_note?: string;
  timeline_note?: string;
}

/** Parameters of `skew.report`: the rules' parameters default to the load's scale. */
export interface ISkewParams {
  run: string;
  operator?: string;
  load?: string;
  eta?: number;
  tau?: number;
  factor?: number;
  threshold?: number;
}

/** Parameters of each request method. */
export interface IRequestParams {
  hello: Record<string, never>;
  'runs.list': Record<string, never>;
  'run.get': { run: string };
  'run.partitions': { run: string; operator: string };
  'run.open': { path: string };
  'run.interactions': { run: string };
  'run.interact': IActionParams;
  'run.snapshot': { run: string; index: number };
  'run.state': { run: string; index: number; operator: string; partition: number };
  'run.page': {
    run: string;
    index: number;
    operator: string;
    partition: number;
    variable: string;
    start: number;
    size: number;
  };
  'debug.view': { run: string };
  'debug.jump': IActionParams & { index: number };
  'debug.jump_to_failure': IActionParams;
  'debug.jump_to': IActionParams & { trace: number; operator: string; partition: number; position: number };
  'debug.step_over': IActionParams & { partition: number };
  'debug.step_into': IActionParams & { partition: number; operator: string };
  'debug.step_out': IActionParams & { partition: number };
  'debug.state': { run: string; operator: string; partition: number };
  'debug.cancel': IActionParams;
  'debug.progress': { run: string };
  'run.actions': { run: string };
  'skew.report': ISkewParams;
  'lineage.outputs': { run: string; start?: number; size?: number; filter?: string };
  'lineage.trace_back': IActionParams & { partition: number; position: number; size?: number };
  'lineage.trace_forward': IActionParams & { operator: string; partition: number; position: number; size?: number };
  'lineage.records': { run: string; trace: number; operator?: string; start?: number; size?: number };
  'versions.list': { run: string };
  'versions.diff': { run: string; other: string };
  'run.export': { run: string; path: string };
  'control.get': { run: string };
  'control.pause': IActionParams;
  'control.resume': IActionParams;
  'control.live_state': { run: string; operator: string; partition: number };
  'control.add_breakpoint': IActionParams & { operator: string; when: string };
  'control.remove_breakpoint': IActionParams & { breakpoint: number };
  'control.decide': IActionParams & { hit: number; action: string; record?: Tagged };
  'lineage.replay': IActionParams & { trace: number; size?: number };
  'samples.get': { run: string; operator: string };
  'summaries.compare': { run: string; other?: string };
  'alerts.groups': { run: string };
}

/** Result of each request method. */
export interface IRequestResults {
  hello: IHelloResult;
  'runs.list': { runs: IRunListItem[] };
  'run.get': IRunSummary;
  'run.partitions': IPartitionsResult;
  'run.open': IRunSummary;
  'run.interactions': { run: string; interactions: IInteraction[] };
  'run.interact': { run: string; interaction: IInteraction };
  'run.snapshot': ISnapshotResult;
  'run.state': IStateResult;
  'run.page': IPageResult;
  'debug.view': IDebugView | null;
  'debug.jump': IDebugView;
  'debug.jump_to_failure': IDebugView;
  'debug.jump_to': IDebugView;
  'debug.step_over': IDebugView;
  'debug.step_into': IDebugView;
  'debug.step_out': IDebugView;
  'debug.state': IDebugStateResult;
  'debug.cancel': { cancelled: boolean };
  /** Null when the run has no debugger yet. */
  'debug.progress': { progress: IReplayProgress | null };
  'run.actions': { run: string; actions: IAction[] };
  'skew.report': ISkewReport;
  'lineage.outputs': { run: string; operator: string; page: ILineagePage };
  'lineage.trace_back': ILineageTrace;
  'lineage.trace_forward': ILineageTrace;
  'lineage.records': { run: string; trace: number; page: ILineagePage };
  'versions.list': { run: string; versions: IVersionRow[] };
  'versions.diff': IVersionDiff;
  /** `run`: the run exported, the one being debugged (the selected run if none is). */
  'run.export': { path: string; hand: string[]; run: string; version: string };
  'control.get': IControlView;
  'control.pause': IPauseResult;
  'control.resume': { seconds: number };
  'control.live_state': { state: { [variable: string]: Tagged } };
  'control.add_breakpoint': IControlView;
  'control.remove_breakpoint': IControlView;
  'control.decide': IControlView;
  'lineage.replay': ILineageReplay;
  'samples.get': ISampleResult;
  'summaries.compare': ISummaryComparison;
  'alerts.groups': { run: string; groups: IAlertGroup[]; total: number };
}

/** Data of each event. */
export interface IEventData {
  'run.added': { run: IRunListItem };
  'run.progress': { run: string; status: RunStatus; duration: number; progress: IOperatorProgress[] };
  'run.status': { run: string; status: RunStatus; error: IRunError | null; warnings: string[] };
  'run.alert': { run: string; alert: IAlert };
  'run.interaction': { run: string; interaction: IInteraction };
  'debug.moved': { run: string; view: IDebugView };
  'debug.preparing': { run: string; progress: IReplayProgress };
  'run.action': { run: string; action: IAction };
  'run.control': { run: string; view: IControlView };
  /** While a --skew run records: its live skew view, whole (`report`, first and when the
   * operator shown changes) or the rows changed since the last event (`changes`).
   * `since`: when the oldest worker sketch this event is the first to carry left its
   * worker (wall time, seconds; null: none new), what the sidebar's latency counts from. */
  'skew.changed': {
    run: string;
    operator: string;
    report: ISkewReport | null;
    changes: ISkewChanges | null;
    since: number | null;
  };
}

/** `run.samples(operator)`: a uniform sample of the operator's input, one row a record. */
export interface ISampleResult {
  run: string;
  operator: string;
  columns: string[];
  rows: unknown[][];
}

/** One change `run.summary_diff(other)` found. */
export interface ISummaryChange {
  operator: string;
  field: string;
  /** "distribution shifted", "became null", "nulls changed", "count changed", "field added"… */
  change: string;
  before: unknown;
  after: unknown;
  /** The KS distance of a shift, the difference of a count or of a null share. */
  statistic: number | null;
}

/** The selected run's summaries against an earlier run of its cell, with charts. */
export interface ISummaryComparison {
  run: string;
  /** The run compared against (null: no earlier run of the cell recorded summaries). */
  other: string | null;
  /** The earlier runs of the cell with summaries, latest first. */
  earlier: { run: string; version: string }[];
  changes: ISummaryChange[];
  /** A Vega-Lite spec (Altair) per shifted field. */
  charts: { operator: string; field: string; spec: unknown }[];
  /** Why nothing is compared (`other` null): this run's own summaries, or none. */
  note: string | null;
}

/** Frontend -> kernel. */
export interface IRequestMessage<M extends RequestMethod = RequestMethod> {
  kind: 'request';
  id: number;
  method: M;
  params: IRequestParams[M];
}

export interface IErrorInfo {
  type: string;
  message: string;
}

/** Kernel -> frontend: the answer to one request. */
export type IReplyMessage =
  | { kind: 'reply'; id: number; ok: true; result: unknown }
  | { kind: 'reply'; id: number | null; ok: false; error: IErrorInfo };

/** Kernel -> frontend: a pushed event. */
export type IEventMessage = {
  [E in EventType]: { kind: 'event'; event: E; data: IEventData[E] };
}[EventType];

export type KernelMessage = IReplyMessage | IEventMessage;

export function isReply(value: unknown): value is IReplyMessage {
  return isObject(value) && value.kind === 'reply' && 'ok' in value;
}

export function isEvent(value: unknown): value is IEventMessage {
  return (
    isObject(value) &&
    value.kind === 'event' &&
    (EVENT_TYPES as readonly unknown[]).includes(value.event) &&
    isObject(value.data)
  );
}

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

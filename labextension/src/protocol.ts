/**
 * Messages of the `icedtea` comm between JupyterLab and the kernel.
 *
 * The kernel side is `icedtea_jupyter/comm/messages.py`; a Python test parses the
 * two literal arrays below and compares them with the Python lists, so keep them
 * literal arrays of strings.
 */

/** The comm target the kernel registers with `%load_ext icedtea_jupyter`. */
export const COMM_TARGET = 'icedtea';

/** The protocol version this frontend speaks (`hello` returns the kernel's). */
export const PROTOCOL_VERSION = 1;

export const REQUEST_METHODS = ['hello', 'runs.list', 'run.get', 'run.partitions', 'run.open'] as const;

export const EVENT_TYPES = ['run.added', 'run.progress', 'run.status', 'run.alert'] as const;

export type RequestMethod = (typeof REQUEST_METHODS)[number];
export type EventType = (typeof EVENT_TYPES)[number];

export type RunStatus = 'running' | 'finished' | 'failed';

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

export interface IHelloResult {
  protocol: number;
  version: string;
}

export interface IPartitionsResult {
  run: string;
  operator: string;
  partitions: IPartitionRow[];
}

/** Parameters of each request method. */
export interface IRequestParams {
  hello: Record<string, never>;
  'runs.list': Record<string, never>;
  'run.get': { run: string };
  'run.partitions': { run: string; operator: string };
  'run.open': { path: string };
}

/** Result of each request method. */
export interface IRequestResults {
  hello: IHelloResult;
  'runs.list': { runs: IRunListItem[] };
  'run.get': IRunSummary;
  'run.partitions': IPartitionsResult;
  'run.open': IRunSummary;
}

/** Data of each event. */
export interface IEventData {
  'run.added': { run: IRunListItem };
  'run.progress': { run: string; status: RunStatus; duration: number; progress: IOperatorProgress[] };
  'run.status': { run: string; status: RunStatus; error: IRunError | null; warnings: string[] };
  'run.alert': { run: string; alert: IAlert };
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

/**
 * A fake kernel connection with an `icedtea` comm target, for the unit tests:
 * it records what the client sends and answers like `icedtea_jupyter/comm/target.py`.
 */
import type { Kernel } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import type { IKernelLike } from '../src/comm/client';
import type { IRequestMessage } from '../src/comm/protocol';

let commCount = 0;

export type Handler = (request: IRequestMessage, comm: FakeComm) => void;

export class FakeComm {
  constructor(
    readonly targetName: string,
    private readonly _kernel: FakeKernel
  ) {}

  readonly commId = `comm-${++commCount}`;
  isDisposed = false;
  opened = false;
  closedByClient = false;
  sent: IRequestMessage[] = [];
  onMsg: (msg: unknown) => void = () => undefined;
  onClose: (msg: unknown) => void = () => undefined;

  open(): unknown {
    this.opened = true;
    this._kernel.handleOpen(this);
    return {};
  }

  send(data: unknown): unknown {
    if (this.isDisposed) {
      throw new Error('Comm is closed');
    }
    const request = data as IRequestMessage;
    this.sent.push(request);
    this._kernel.handleRequest(this, request);
    return {};
  }

  close(): unknown {
    this.closedByClient = true;
    this.isDisposed = true;
    return {};
  }

  dispose(): void {
    this.isDisposed = true;
  }

  /** The kernel sends `data` on this comm. */
  push(data: unknown): void {
    if (!this.isDisposed) {
      this.onMsg({ content: { comm_id: this.commId, data } });
    }
  }

  /** The kernel closes this comm (as it does for an unknown target). */
  closeFromKernel(): void {
    if (!this.isDisposed) {
      this.onClose({ content: { comm_id: this.commId, data: {} } });
      this.isDisposed = true;
    }
  }
}

export class FakeKernel {
  status: Kernel.Status;
  isDisposed = false;
  readonly statusChanged = new Signal<this, Kernel.Status>(this);
  readonly iopubMessage = new Signal<this, unknown>(this);
  readonly comms: FakeComm[] = [];
  /** Whether `%load_ext icedtea_jupyter` ran: else comm opens are refused. */
  targetRegistered = true;
  /** Answers to requests other than `hello`; null: no answer at all. */
  handler: Handler | null = null;
  /** Answer `hello` by itself (false: never answer it). */
  answerHello = true;

  constructor(status: Kernel.Status = 'idle') {
    this.status = status;
  }

  createComm(targetName: string): FakeComm {
    const comm = new FakeComm(targetName, this);
    this.comms.push(comm);
    return comm;
  }

  /** The comm the client uses now (the last one opened and not closed). */
  get comm(): FakeComm {
    const comm = this.comms[this.comms.length - 1];
    if (!comm) {
      throw new Error('no comm was opened');
    }
    return comm;
  }

  setStatus(status: Kernel.Status): void {
    this.status = status;
    this.statusChanged.emit(status);
  }

  /** A cell ran (any client): the iopub execute_input message. */
  executeInput(): void {
    this.iopubMessage.emit({ header: { msg_type: 'execute_input' }, content: {} });
  }

  handleOpen(comm: FakeComm): void {
    if (!this.targetRegistered) {
      void Promise.resolve().then(() => comm.closeFromKernel());
    }
  }

  handleRequest(comm: FakeComm, request: IRequestMessage): void {
    if (!this.targetRegistered) {
      return;
    }
    if (request.method === 'hello') {
      if (this.answerHello) {
        later(() => comm.push({ kind: 'reply', id: request.id, ok: true, result: { protocol: 1, version: '0.1.0' } }));
      }
      return;
    }
    this.handler?.(request, comm);
  }

  /** Typed as the client wants it. */
  get asKernel(): IKernelLike {
    return this as unknown as IKernelLike;
  }
}

/** Run `fn` on a later microtask, as a kernel reply would arrive. */
export function later(fn: () => void): void {
  void Promise.resolve().then(fn);
}

/** Let pending microtasks and promise chains settle. */
export async function flush(times = 10): Promise<void> {
  for (let i = 0; i < times; i++) {
    await Promise.resolve();
  }
}

import type { Kernel, KernelMessage } from '@jupyterlab/services';
import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  COMM_TARGET,
  IEventMessage,
  IHelloResult,
  IReplyMessage,
  IRequestMessage,
  IRequestParams,
  IRequestResults,
  RequestMethod,
  isEvent,
  isReply
} from './protocol';

/**
 * What the client needs of a kernel connection; a real `Kernel.IKernelConnection`
 * has all of it, and a fake one in the tests implements just this.
 */
export type IKernelLike = Pick<
  Kernel.IKernelConnection,
  'createComm' | 'status' | 'statusChanged' | 'iopubMessage' | 'isDisposed'
>;

/**
 * - `disconnected`: no kernel (no notebook, or its kernel is shut down);
 * - `connecting`: opening the comm, or waiting for the kernel to be free to answer;
 * - `ready`: the comm is open and answered `hello`;
 * - `unavailable`: the kernel refused the comm (the extension is not loaded there)
 *   or did not answer in time.
 */
export type ClientState = 'disconnected' | 'connecting' | 'ready' | 'unavailable';

/** A request that failed: an error reply (`type` from the kernel), a timeout or a lost comm. */
export class RequestError extends Error {
  constructor(
    message: string,
    readonly type: string
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

interface IPending {
  resolve: (value: unknown) => void;
  reject: (reason: RequestError) => void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * The `icedtea` comm of one kernel at a time: opens it, matches replies to requests
 * by id, turns pushed events into a signal, and reopens the comm when the kernel
 * restarts or changes. The comm is the only channel: no code is executed.
 */
export class IcedteaClient implements IDisposable {
  constructor(options: IcedteaClient.IOptions = {}) {
    this._requestTimeout = options.requestTimeout ?? 10000;
    this._helloTimeout = options.helloTimeout ?? 4000;
  }

  /** The current state; see `ClientState`. */
  get state(): ClientState {
    return this._state;
  }

  get stateChanged(): ISignal<this, ClientState> {
    return this._stateChanged;
  }

  /** Every event the kernel pushes. */
  get event(): ISignal<this, IEventMessage> {
    return this._event;
  }

  /** The kernel's answer to `hello` on the open comm, else null. */
  get hello(): IHelloResult | null {
    return this._hello;
  }

  get kernel(): IKernelLike | null {
    return this._kernel;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Follow another kernel (or none); the comm of the previous one is closed. */
  setKernel(kernel: IKernelLike | null): void {
    if (kernel === this._kernel || this._isDisposed) {
      return;
    }
    if (this._kernel) {
      this._kernel.statusChanged.disconnect(this._onStatus, this);
      this._kernel.iopubMessage.disconnect(this._onIopub, this);
    }
    this._closeComm('the notebook changed kernel');
    this._kernel = kernel;
    this._retryOnIdle = false;
    if (!kernel || kernel.isDisposed) {
      this._kernel = null;
      this._setState('disconnected');
      return;
    }
    kernel.statusChanged.connect(this._onStatus, this);
    kernel.iopubMessage.connect(this._onIopub, this);
    if (kernel.status === 'idle' || kernel.status === 'busy') {
      void this.connect();
    } else {
      // Starting, restarting or not connected yet: open once it is idle.
      this._retryOnIdle = true;
      this._setState('connecting');
    }
  }

  /**
   * Open the comm (or reuse the open one) and say hello. Resolves true when the
   * kernel answered, false when it refused the comm, did not answer in time, or
   * a newer attempt superseded this one.
   */
  async connect(): Promise<boolean> {
    const kernel = this._kernel;
    if (!kernel || this._isDisposed) {
      return false;
    }
    const attempt = ++this._attempt;
    this._inFlight = true;
    try {
      return await this._connect(kernel, attempt);
    } finally {
      if (attempt === this._attempt) {
        this._inFlight = false;
      }
    }
  }

  private async _connect(kernel: IKernelLike, attempt: number): Promise<boolean> {
    this._retryOnIdle = false;
    this._executedDuringAttempt = false;
    this._hello = null;
    this._setState('connecting');
    let comm = this._comm;
    if (!comm || comm.isDisposed) {
      // A comm the kernel has not refused stays open across attempts: closing it
      // and opening another at once races JupyterLab's per-target subshell
      // reference count, and the new comm can end up on a deleted subshell.
      try {
        comm = this._openComm(kernel);
      } catch {
        this._comm = null;
        this._setState('unavailable');
        return false;
      }
    }
    if (!this._opened.has(comm)) {
      await waitForSubshell(kernel, comm);
      if (attempt !== this._attempt || this._comm !== comm) {
        return false;
      }
      try {
        comm.open({});
        this._opened.add(comm);
      } catch {
        this._comm = null;
        this._setState('unavailable');
        return false;
      }
    }
    try {
      const hello = await this._send(comm, 'hello', {}, this._helloTimeout);
      if (attempt !== this._attempt) {
        return false;
      }
      this._hello = hello;
      this._setState('ready');
      return true;
    } catch (reason) {
      if (attempt !== this._attempt) {
        return false;
      }
      const timedOut = reason instanceof RequestError && reason.type === 'timeout';
      if (!timedOut) {
        // The kernel closed the comm: no `icedtea` target there (the extension is
        // not loaded). Try again once some code has run.
        this._setState('unavailable');
        return false;
      }
      if (this._executedDuringAttempt || this._kernel?.status === 'busy') {
        // Cells are running and the messages wait behind them: ask again when idle.
        this._retryOnIdle = true;
        this._setState('connecting');
        if (this._kernel?.status === 'idle') {
          setTimeout(() => this._retryIfIdle(), 0);
        }
      } else {
        this._setState('unavailable');
      }
      return false;
    }
  }

  /**
   * Send one request; the promise resolves with the reply's result, or rejects
   * with a RequestError on an error reply, a timeout or a lost comm.
   */
  request<M extends RequestMethod>(
    method: M,
    params: IRequestParams[M],
    timeout?: number
  ): Promise<IRequestResults[M]> {
    if (!this._comm || this._state !== 'ready') {
      return Promise.reject(new RequestError(`${method}: the icedtea comm is not open`, 'not_connected'));
    }
    return this._send(this._comm, method, params, timeout ?? this._requestTimeout);
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this.setKernel(null);
    this._isDisposed = true;
    Signal.clearData(this);
  }

  /** Create the comm object and wire its callbacks (it is opened by `connect`). */
  private _openComm(kernel: IKernelLike): Kernel.IComm {
    const comm = kernel.createComm(COMM_TARGET);
    comm.onMsg = msg => {
      if (this._comm === comm) {
        this._onData(msg.content.data);
      }
    };
    comm.onClose = () => {
      if (this._comm === comm) {
        // The kernel closed it: no `icedtea` target there (or it was unloaded).
        this._comm = null;
        this._hello = null;
        this._rejectAll('the kernel closed the icedtea comm', 'closed');
        this._setState('unavailable');
      }
    };
    this._comm = comm;
    return comm;
  }

  private _retryIfIdle(): void {
    if (this._retryOnIdle && this._state !== 'ready' && this._kernel?.status === 'idle' && !this._isDisposed) {
      void this.connect();
    }
  }

  private _send<M extends RequestMethod>(
    comm: Kernel.IComm,
    method: M,
    params: IRequestParams[M],
    timeout: number
  ): Promise<IRequestResults[M]> {
    const id = this._nextId++;
    const message: IRequestMessage<M> = { kind: 'request', id, method, params };
    return new Promise<IRequestResults[M]>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this._pending.delete(id)) {
          reject(new RequestError(`${method}: no reply within ${timeout} ms`, 'timeout'));
        }
      }, timeout);
      this._pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      try {
        comm.send(message as unknown as KernelMessage.ICommMsgMsg['content']['data']);
      } catch (reason) {
        clearTimeout(timer);
        this._pending.delete(id);
        reject(new RequestError(`${method}: cannot send: ${String(reason)}`, 'closed'));
      }
    });
  }

  private _onData(data: unknown): void {
    if (isReply(data)) {
      this._onReply(data);
    } else if (isEvent(data)) {
      this._event.emit(data);
    } else {
      console.warn('icedtea: unexpected message on the comm', data);
    }
  }

  private _onReply(reply: IReplyMessage): void {
    const pending = reply.id === null ? undefined : this._pending.get(reply.id);
    if (!pending) {
      if (!reply.ok) {
        console.warn(`icedtea: error reply to no pending request: ${reply.error.message}`);
      }
      return;
    }
    this._pending.delete(reply.id as number);
    clearTimeout(pending.timer);
    if (reply.ok) {
      pending.resolve(reply.result);
    } else {
      pending.reject(new RequestError(reply.error.message, reply.error.type));
    }
  }

  private _onStatus(kernel: IKernelLike, status: Kernel.Status): void {
    switch (status) {
      case 'restarting':
      case 'autorestarting':
        // The new kernel process knows nothing of the old comm.
        this._closeComm(`the kernel is ${status}`);
        this._retryOnIdle = true;
        this._setState('connecting');
        break;
      case 'dead':
      case 'terminating':
        this._closeComm(`the kernel is ${status}`);
        this._retryOnIdle = status === 'terminating';
        this._setState('disconnected');
        break;
      case 'idle':
        // Not while an attempt waits for its hello: it ends by itself (reply or timeout).
        if (this._retryOnIdle && this._state !== 'ready' && !this._awaitingHello()) {
          void this.connect();
        }
        break;
      default:
        break;
    }
  }

  private _onIopub(kernel: IKernelLike, msg: KernelMessage.IIOPubMessage): void {
    // Code ran (maybe `%load_ext icedtea_jupyter`): worth asking again once idle.
    if (msg.header.msg_type === 'execute_input' && this._state !== 'ready') {
      this._retryOnIdle = true;
      this._executedDuringAttempt = true;
    }
  }

  /** Whether an attempt is under way (its reply or timeout will settle the state). */
  private _awaitingHello(): boolean {
    return this._inFlight;
  }

  /** Close the comm (if any) and abandon any attempt under way. */
  private _closeComm(why: string): void {
    this._attempt++;
    this._inFlight = false;
    const comm = this._comm;
    this._comm = null;
    this._hello = null;
    this._rejectAll(`the icedtea comm was closed: ${why}`, 'closed');
    if (comm && !comm.isDisposed) {
      try {
        comm.close();
      } catch {
        // The kernel is gone; nothing to tell it.
      }
    }
  }

  private _rejectAll(message: string, type: string): void {
    const pending = [...this._pending.values()];
    this._pending.clear();
    for (const entry of pending) {
      clearTimeout(entry.timer);
      entry.reject(new RequestError(message, type));
    }
  }

  private _setState(state: ClientState): void {
    if (state !== this._state) {
      this._state = state;
      this._stateChanged.emit(state);
    }
  }

  private _kernel: IKernelLike | null = null;
  private _comm: Kernel.IComm | null = null;
  private _state: ClientState = 'disconnected';
  private _hello: IHelloResult | null = null;
  private _nextId = 1;
  private _attempt = 0;
  private _retryOnIdle = false;
  private _executedDuringAttempt = false;
  private _inFlight = false;
  private _opened = new WeakSet<Kernel.IComm>();
  private _pending = new Map<number, IPending>();
  private _requestTimeout: number;
  private _helloTimeout: number;
  private _isDisposed = false;
  private _stateChanged = new Signal<this, ClientState>(this);
  private _event = new Signal<this, IEventMessage>(this);
}

/**
 * Resolve once the comm's kernel subshell exists, or at once when it will use none.
 *
 * JupyterLab 4.6 sends comm messages over one kernel subshell per comm target when
 * the kernel supports subshells (ipykernel 7): they are then handled while a cell
 * runs. Messages sent before the subshell exists go to the main shell instead, and
 * a `comm_msg` handled by the subshell before the main shell has processed the
 * `comm_open` would be dropped; so the comm is opened only once its subshell is up.
 */
async function waitForSubshell(kernel: IKernelLike, comm: Kernel.IComm, timeout = 3000): Promise<void> {
  const handler = comm as Kernel.IComm & { subshellStarted?: Promise<void>; commsOverSubshells?: string };
  const connection = kernel as IKernelLike & { info?: Promise<unknown>; supportsSubshells?: boolean };
  if (!handler.subshellStarted || !connection.info) {
    return;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<void>(resolve => (timer = setTimeout(resolve, timeout)));
  try {
    await Promise.race([connection.info, expired]);
    if (connection.supportsSubshells && handler.commsOverSubshells !== 'disabled') {
      await Promise.race([handler.subshellStarted, expired]);
    }
  } catch {
    // No subshell: the comm uses the main shell.
  } finally {
    clearTimeout(timer);
  }
}

export namespace IcedteaClient {
  export interface IOptions {
    /** Milliseconds before a request without reply rejects (default 10 s). */
    requestTimeout?: number;
    /** Milliseconds to wait for the answer to `hello` (default 4 s). */
    helloTimeout?: number;
  }
}

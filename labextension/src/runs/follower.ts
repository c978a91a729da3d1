import type { ISessionContext } from '@jupyterlab/apputils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { IDisposable } from '@lumino/disposable';

import type { IcedteaClient } from '../comm/client';
import type { IcedteaSidebar } from '../sidebar';

/**
 * Follows the kernel of the current notebook: gives it to the client when the
 * notebook or its kernel changes, and tells the sidebar which notebook it shows.
 */
export class NotebookFollower implements IDisposable {
  constructor(
    private readonly _tracker: INotebookTracker,
    private readonly _client: IcedteaClient,
    private readonly _sidebar: IcedteaSidebar
  ) {
    _tracker.currentChanged.connect(this._onCurrent, this);
    this._onCurrent(_tracker, _tracker.currentWidget);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._tracker.currentChanged.disconnect(this._onCurrent, this);
    this._follow(null);
  }

  private _onCurrent(tracker: INotebookTracker, panel: NotebookPanel | null): void {
    this._follow(panel);
  }

  private _follow(panel: NotebookPanel | null): void {
    const previous = this._context;
    if (previous) {
      previous.kernelChanged.disconnect(this._onKernel, this);
      previous.statusChanged.disconnect(this._onKernel, this);
      previous.propertyChanged.disconnect(this._onKernel, this);
    }
    this._context = panel?.sessionContext ?? null;
    if (this._context) {
      this._context.kernelChanged.connect(this._onKernel, this);
      this._context.statusChanged.connect(this._onKernel, this);
      this._context.propertyChanged.connect(this._onKernel, this);
    }
    this._onKernel();
  }

  /** Any change of the followed session: hand the current kernel to the client. */
  private _onKernel(): void {
    const context = this._context;
    const kernel = context?.session?.kernel ?? null;
    this._client.setKernel(kernel && !kernel.isDisposed ? kernel : null);
    this._sidebar.setNotebook(context ? context.name || context.path : null);
  }

  private _context: ISessionContext | null = null;
  private _isDisposed = false;
}

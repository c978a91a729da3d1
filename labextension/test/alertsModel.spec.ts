import { Signal } from '@lumino/signaling';

import { AlertsModel, alertsLabel } from '../src/alerts/model';
import type { ClientState } from '../src/comm/client';
import type { IAlertGroup, IEventMessage, IRequestResults, RequestMethod } from '../src/comm/protocol';
import { LIVE_INTERVAL } from '../src/comm/throttle';
import { RunsModel } from '../src/runs/model';
import { flush } from './fakeKernel';
import { oneRunReply } from './oneRun';
import { ManualClock } from './timeTravelKernel';

function group(count: number): IAlertGroup {
  return {
    tool: 'check',
    check: 'clean: row >= 0',
    operator: 'clean',
    level: 'warning',
    count,
    alerts: Math.min(count, 5),
    message: 'row failed the check',
    records: [{ repr: '-7', partition: 0, message: 'row failed the check' }]
  };
}

/** A kernel's comm with one running run whose alerts grow as the test says. */
class FakeSource {
  state: ClientState = 'ready';
  stateChanged = new Signal<unknown, ClientState>(this);
  event = new Signal<unknown, IEventMessage>(this);
  failures = 0;
  calls = 0;

  async request<M extends RequestMethod>(method: M): Promise<IRequestResults[M]> {
    const reply = oneRunReply(method, 'running');
    if (reply !== undefined) {
      return reply as IRequestResults[M];
    }
    switch (method) {
      case 'alerts.groups':
        this.calls++;
        return {
          run: 'r1',
          groups: this.failures ? [group(this.failures)] : [],
          total: this.failures
        } as IRequestResults[M];
    }
    throw new Error(`unexpected ${method}`);
  }

  alert(): void {
    this.failures++;
    this.event.emit({ kind: 'event', event: 'run.alert', data: { run: 'r1', alert: { message: 'm' } } });
  }
}

describe('AlertsModel', () => {
  it('fetches the groups live, at most once per interval, and says when the first arrives', async () => {
    const source = new FakeSource();
    const clock = new ManualClock();
    const model = new AlertsModel(new RunsModel(source), source, clock);
    await flush(30);
    expect(model.groups).toEqual([]);
    let first = 0;
    model.firstArrived.connect(() => first++);
    for (let i = 0; i < 10; i++) {
      source.alert();
      clock.advance(10);
      await flush(5);
    }
    expect(first).toBe(1);
    clock.advance(LIVE_INTERVAL);
    await flush(10);
    expect(model.total).toBe(10);
    expect(model.groups[0].records[0].repr).toBe('-7');
    expect(source.calls).toBeLessThanOrEqual(3); // the initial fetch, then throttled
  });

  it('counts every group’s failures in the section’s title', async () => {
    const source = new FakeSource();
    source.failures = 12;
    const model = new AlertsModel(new RunsModel(source), source);
    await flush(30);
    expect(model.groups[0].check).toBe('clean: row >= 0');
    expect(alertsLabel(model.total)).toBe('Alerts (12)');
    expect(alertsLabel(0)).toBe('Alerts');
  });
});

import { IcedteaClient, RequestError } from '../src/comm/client';
import { COMM_TARGET, IEventMessage, IRequestMessage } from '../src/comm/protocol';
import { FakeKernel, flush, later } from './fakeKernel';

function reply(id: number, result: unknown) {
  return { kind: 'reply', id, ok: true, result };
}

async function readyClient(options: IcedteaClient.IOptions = {}): Promise<[IcedteaClient, FakeKernel]> {
  const kernel = new FakeKernel();
  const client = new IcedteaClient({ helloTimeout: 200, requestTimeout: 200, ...options });
  client.setKernel(kernel.asKernel);
  await flush();
  expect(client.state).toBe('ready');
  return [client, kernel];
}

describe('IcedteaClient', () => {
  // Timeouts are tested with jest's fake timers, moved by hand: no test waits for real time.
  afterEach(() => {
    jest.useRealTimers();
  });

  it('opens a comm to the icedtea target and says hello', async () => {
    const [client, kernel] = await readyClient();
    expect(kernel.comms).toHaveLength(1);
    expect(kernel.comm.targetName).toBe(COMM_TARGET);
    expect(kernel.comm.opened).toBe(true);
    expect(kernel.comm.sent[0]).toEqual({ kind: 'request', id: expect.any(Number), method: 'hello', params: {} });
    expect(client.hello).toEqual({ protocol: 1, version: '0.1.0' });
    client.dispose();
  });

  it('matches replies to requests by id, whatever their order', async () => {
    const [client, kernel] = await readyClient();
    const held: IRequestMessage[] = [];
    kernel.handler = request => held.push(request);
    const list = client.request('runs.list', {});
    const get = client.request('run.get', { run: 'r1' });
    expect(held.map(r => r.method)).toEqual(['runs.list', 'run.get']);
    expect(new Set(held.map(r => r.id)).size).toBe(2);
    // Answer the second request first.
    kernel.comm.push(reply(held[1].id, { id: 'r1', status: 'finished' }));
    kernel.comm.push(reply(held[0].id, { runs: [] }));
    await expect(get).resolves.toEqual({ id: 'r1', status: 'finished' });
    await expect(list).resolves.toEqual({ runs: [] });
    expect(held[1].params).toEqual({ run: 'r1' });
    client.dispose();
  });

  it('rejects on an error reply with the kernel error type and message', async () => {
    const [client, kernel] = await readyClient();
    kernel.handler = (request, comm) =>
      later(() =>
        comm.push({
          kind: 'reply',
          id: request.id,
          ok: false,
          error: { type: 'not_found', message: 'no run r9' }
        })
      );
    const result = client.request('run.get', { run: 'r9' });
    await expect(result).rejects.toBeInstanceOf(RequestError);
    await expect(result).rejects.toMatchObject({ type: 'not_found', message: 'no run r9' });
    // The comm stays usable.
    expect(client.state).toBe('ready');
    client.dispose();
  });

  it('rejects a request without reply after its timeout, and ignores a late reply', async () => {
    jest.useFakeTimers();
    const [client, kernel] = await readyClient();
    let late: IRequestMessage | null = null;
    kernel.handler = request => (late = request);
    const started = Date.now();
    const rejected = expect(client.request('runs.list', {}, 60)).rejects.toMatchObject({ type: 'timeout' });
    await jest.advanceTimersByTimeAsync(60);
    await rejected;
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(() => kernel.comm.push(reply(late!.id, { runs: [] }))).not.toThrow();
    expect(client.state).toBe('ready');
    client.dispose();
  });

  it('uses the default request timeout', async () => {
    jest.useFakeTimers();
    const [client, kernel] = await readyClient({ requestTimeout: 80 });
    kernel.handler = () => undefined;
    const rejected = expect(client.request('run.get', { run: 'x' })).rejects.toMatchObject({ type: 'timeout' });
    await jest.advanceTimersByTimeAsync(80);
    await rejected;
    client.dispose();
  });

  it('emits the events the kernel pushes', async () => {
    const [client, kernel] = await readyClient();
    const events: IEventMessage[] = [];
    client.event.connect((_, e) => events.push(e));
    const data = { run: 'r1', status: 'running', duration: 1.5, progress: [] };
    kernel.comm.push({ kind: 'event', event: 'run.progress', data });
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    kernel.comm.push({ kind: 'event', event: 'not.an.event', data: {} });
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
    expect(events).toEqual([{ kind: 'event', event: 'run.progress', data }]);
    client.dispose();
  });

  it('is unavailable when the kernel refuses the comm (extension not loaded)', async () => {
    const kernel = new FakeKernel();
    kernel.targetRegistered = false;
    const client = new IcedteaClient({ helloTimeout: 1000 });
    client.setKernel(kernel.asKernel);
    await flush();
    expect(client.state).toBe('unavailable');
    await expect(client.request('runs.list', {})).rejects.toMatchObject({ type: 'not_connected' });
    // An idle kernel with nothing executed: no new attempt.
    kernel.setStatus('busy');
    kernel.setStatus('idle');
    expect(kernel.comms).toHaveLength(1);
    // `%load_ext icedtea_jupyter` runs: the next idle opens a new comm.
    kernel.targetRegistered = true;
    kernel.setStatus('busy');
    kernel.executeInput();
    kernel.setStatus('idle');
    await flush();
    expect(kernel.comms).toHaveLength(2);
    expect(client.state).toBe('ready');
    client.dispose();
  });

  it('is unavailable when hello gets no answer, and tries again after code ran', async () => {
    jest.useFakeTimers();
    const kernel = new FakeKernel();
    kernel.answerHello = false;
    const client = new IcedteaClient({ helloTimeout: 50 });
    const states: string[] = [];
    client.stateChanged.connect((_, s) => states.push(s));
    client.setKernel(kernel.asKernel);
    await jest.advanceTimersByTimeAsync(80);
    expect(client.state).toBe('unavailable');
    kernel.answerHello = true;
    kernel.executeInput();
    kernel.setStatus('idle');
    await flush();
    expect(client.state).toBe('ready');
    expect(states).toEqual(['connecting', 'unavailable', 'connecting', 'ready']);
    // The comm the kernel did not refuse is kept: hello again on the same comm.
    expect(kernel.comms).toHaveLength(1);
    expect(kernel.comm.sent.map(r => r.method)).toEqual(['hello', 'hello']);
    client.dispose();
  });

  it('does not start another attempt while one waits for its hello', async () => {
    jest.useFakeTimers();
    const kernel = new FakeKernel();
    kernel.answerHello = false;
    const client = new IcedteaClient({ helloTimeout: 60 });
    client.setKernel(kernel.asKernel);
    await flush();
    // Cells run and end while the hello waits (Run All).
    for (let i = 0; i < 3; i++) {
      kernel.setStatus('busy');
      kernel.executeInput();
      kernel.setStatus('idle');
    }
    expect(kernel.comm.sent).toHaveLength(1);
    expect(client.state).toBe('connecting');
    // It timed out after code ran: a new hello, at once since the kernel is idle.
    kernel.answerHello = true;
    await jest.advanceTimersByTimeAsync(90);
    await flush();
    expect(client.state).toBe('ready');
    expect(kernel.comms).toHaveLength(1);
    expect(kernel.comm.sent.map(r => r.method)).toEqual(['hello', 'hello']);
    client.dispose();
  });

  it('opens the comm once its kernel subshell has started', async () => {
    const kernel = new FakeKernel();
    let started!: () => void;
    const subshellStarted = new Promise<void>(resolve => (started = resolve));
    Object.assign(kernel, { info: Promise.resolve({}), supportsSubshells: true });
    const createComm = kernel.createComm.bind(kernel);
    kernel.createComm = (target: string) => Object.assign(createComm(target), { subshellStarted });
    const client = new IcedteaClient();
    client.setKernel(kernel.asKernel);
    await flush();
    expect(kernel.comms).toHaveLength(1);
    expect(kernel.comm.opened).toBe(false);
    expect(kernel.comm.sent).toHaveLength(0);
    started();
    await flush();
    expect(kernel.comm.opened).toBe(true);
    expect(client.state).toBe('ready');
    client.dispose();
  });

  it('keeps waiting when hello times out while the kernel is busy', async () => {
    jest.useFakeTimers();
    const kernel = new FakeKernel('busy');
    kernel.answerHello = false;
    const client = new IcedteaClient({ helloTimeout: 30 });
    client.setKernel(kernel.asKernel);
    await jest.advanceTimersByTimeAsync(60);
    expect(client.state).toBe('connecting');
    kernel.answerHello = true;
    kernel.setStatus('idle');
    await flush();
    expect(client.state).toBe('ready');
    client.dispose();
  });

  it('waits for a starting kernel to be idle before opening the comm', async () => {
    const kernel = new FakeKernel('starting');
    const client = new IcedteaClient();
    client.setKernel(kernel.asKernel);
    expect(client.state).toBe('connecting');
    expect(kernel.comms).toHaveLength(0);
    kernel.setStatus('idle');
    await flush();
    expect(kernel.comms).toHaveLength(1);
    expect(client.state).toBe('ready');
    client.dispose();
  });

  it('reopens the comm after a kernel restart', async () => {
    const [client, kernel] = await readyClient();
    kernel.handler = () => undefined; // never answers
    const pending = client.request('runs.list', {});
    const first = kernel.comm;
    kernel.setStatus('restarting');
    await expect(pending).rejects.toMatchObject({ type: 'closed' });
    expect(client.state).toBe('connecting');
    expect(first.isDisposed).toBe(true);
    kernel.setStatus('starting');
    kernel.setStatus('idle');
    await flush();
    expect(kernel.comms).toHaveLength(2);
    expect(kernel.comm).not.toBe(first);
    expect(kernel.comm.sent[0].method).toBe('hello');
    expect(client.state).toBe('ready');
    // Messages on the old comm are ignored.
    const events: IEventMessage[] = [];
    client.event.connect((_, e) => events.push(e));
    first.isDisposed = false;
    first.push({ kind: 'event', event: 'run.alert', data: { run: 'r', alert: {} } });
    expect(events).toHaveLength(0);
    client.dispose();
  });

  it('reopens after an automatic restart (kernel died and came back)', async () => {
    const [client, kernel] = await readyClient();
    kernel.setStatus('autorestarting');
    expect(client.state).toBe('connecting');
    kernel.setStatus('idle');
    await flush();
    expect(kernel.comms).toHaveLength(2);
    expect(client.state).toBe('ready');
    client.dispose();
  });

  it('follows a kernel change and closes the old comm', async () => {
    const [client, kernel] = await readyClient();
    const other = new FakeKernel();
    client.setKernel(other.asKernel);
    expect(kernel.comm.closedByClient).toBe(true);
    await flush();
    expect(other.comms).toHaveLength(1);
    expect(client.state).toBe('ready');
    // The old kernel's status no longer matters.
    kernel.setStatus('restarting');
    expect(client.state).toBe('ready');
    client.setKernel(null);
    expect(client.state).toBe('disconnected');
    expect(other.comm.closedByClient).toBe(true);
    client.dispose();
  });

  it('rejects pending requests when the kernel closes the comm', async () => {
    const [client, kernel] = await readyClient();
    kernel.handler = () => undefined;
    const pending = client.request('runs.list', {});
    kernel.comm.closeFromKernel();
    await expect(pending).rejects.toMatchObject({ type: 'closed' });
    expect(client.state).toBe('unavailable');
    client.dispose();
  });

  it('gives each request a new id', async () => {
    const [client, kernel] = await readyClient();
    kernel.handler = (request, comm) => later(() => comm.push(reply(request.id, { runs: [] })));
    await Promise.all([
      client.request('runs.list', {}),
      client.request('runs.list', {}),
      client.request('runs.list', {})
    ]);
    const ids = kernel.comm.sent.map(r => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    client.dispose();
  });
});

// What each scenario option may be, declared once by option name: an option means the same thing in
// every scenario that has it (replicas are replicas everywhere), so one table covers the catalog and
// a scenario's option declarations (definition.ts's OptionSpec) carry only its values and docs.
// `--set`, the config's `set` and every scenario's defaults and nightly values are checked against it
// (option-kinds.test.ts makes a new option without a kind fail).

export interface OptionKind {
  /** Whole numbers only (counts, milliseconds, terminationGracePeriodSeconds, which is an int64). */
  integer: boolean;
  min: number;
  max: number;
  /** True when `min` itself is not allowed (a rate of 0 would send nothing). */
  aboveMin?: boolean;
  unit?: 'seconds' | 'milliseconds' | 'per second';
}

const HOUR_MS = 3_600_000;
const count = (min: number, max: number): OptionKind => ({ integer: true, min, max });
const ms = (min: number, max = HOUR_MS): OptionKind => ({ integer: true, min, max, unit: 'milliseconds' });
const rate = (max: number): OptionKind => ({ integer: false, min: 0, aboveMin: true, max, unit: 'per second' });

export const OPTION_KINDS: Readonly<Record<string, OptionKind>> = {
  replicas: count(1, 20),
  replicasAfter: count(0, 20),
  gateways: count(1, 10),
  gatewayReplicas: count(1, 10),
  backends: count(1, 20),
  connections: count(1, 10_000),
  clients: count(1, 10_000),
  keepAliveConnections: count(0, 10_000),
  freshClients: count(0, 10_000),
  longRequests: count(0, 1_000),
  overlongRequests: count(0, 1_000),
  thinkMs: ms(0, 60_000),
  postBytes: count(0, 65_536),
  streams: count(1, 1_000),
  sessions: count(1, 1_000),
  streamsPerSession: count(1, 1_000),
  channels: count(1, 1_000),
  messagesPerStream: count(1, 1_000_000),
  messageIntervalMs: ms(1, 60_000),
  deadlineMarginMs: ms(1),
  flows: count(1, 1_000),
  newFlows: count(1, 1_000),
  // Kubernetes: terminationGracePeriodSeconds is an integer; 0 means SIGKILL at once.
  graceSeconds: { integer: true, min: 0, max: 3600, unit: 'seconds' },
  backendGraceSeconds: { integer: true, min: 0, max: 3600, unit: 'seconds' },
  // The local provider sleeps fractions of a second; 0 means no preStop hook.
  preStopSeconds: { integer: false, min: 0, max: 3600, unit: 'seconds' },
  programmingDelayMs: ms(0),
  requestMs: ms(0),
  deleteAtMs: ms(0),
  restartAtMs: ms(0),
  rolloutAtMs: ms(0),
  scaleAtMs: ms(0),
  reloadAtMs: ms(0),
  swapAtMs: ms(0),
  movedWithinMs: ms(0),
  routeRecreate: count(0, 1),
  longRequestMs: ms(1),
  retireWithinMs: ms(1),
  settleMs: ms(0),
  rolloutMaxMs: ms(1),
  exitWithinMs: ms(1),
  stallMs: ms(1),
  // 0: derived from the gateway's drain bounds (gateway-streams.ts).
  streamMs: ms(0),
  flowMs: ms(1),
  newFlowMs: ms(1),
  newFlowsAtMs: ms(0),
  echoIdleMs: ms(1),
  idleExitMs: ms(1),
  backendIdleCloseMs: ms(0, 60_000),
  // PodDisruptionBudget minAvailable; 0 means no budget.
  minAvailable: count(0, 20),
  // Kubernetes: readiness initialDelaySeconds is an integer.
  startupSeconds: { integer: true, min: 0, max: 600, unit: 'seconds' },
  drainAtMs: ms(0),
  retryMs: ms(1),
  drainTimeoutMs: ms(1),
  rate: rate(100_000),
  ratePerClient: rate(10_000),
  ratePerStream: rate(10_000),
  ratePerChannel: rate(10_000),
  ratePerFlow: rate(100_000),
};

/** "a whole number of milliseconds from 0 to 3600000", for messages and `zerodrop list`. */
export function describeKind(kind: OptionKind): string {
  const unit = kind.unit === undefined ? '' : kind.unit === 'per second' ? ' per second' : ` of ${kind.unit}`;
  const range = kind.aboveMin ? `greater than ${kind.min} and at most ${kind.max}` : `from ${kind.min} to ${kind.max}`;
  return `${kind.integer ? 'a whole number' : 'a number'}${unit} ${range}`;
}

/** Undefined when `value` is allowed for option `key`, else "replicas must be a whole number from 1 to 20". */
export function optionProblem(key: string, value: number): string | undefined {
  const kind = OPTION_KINDS[key];
  if (kind === undefined) return `${key} has no declared kind (src/scenarios/option-kinds.ts)`;
  const ok =
    Number.isFinite(value) &&
    (!kind.integer || Number.isInteger(value)) &&
    (kind.aboveMin ? value > kind.min : value >= kind.min) &&
    value <= kind.max;
  return ok ? undefined : `${key} must be ${describeKind(kind)}`;
}

// The variants each store runs: token lifetimes and format, one or two instances, sequence counts and command mix.
import fc from 'fast-check';
import { commandArbitraries, index, weighted } from './arbitraries.js';
import { Expire, Sleep } from './expiry-commands.js';
import type { Cmd, Lifetimes, Model, Real } from './model.js';
import { EXPIRY_RUNS, JWT_RUNS, MAX_COMMANDS, REPLAY_PATH, RUNS, TWO_INSTANCE_RUNS } from './settings.js';

/** Long-lived tokens: nothing expires within a sequence, so every answer is decided by the revocations alone. */
const LONG_LIVED: Lifetimes = { access: 3600, refresh: 7200, code: 60 };
/** Short-lived tokens and codes (the shortest the options allow), with sleeps among the commands. */
const SHORT_LIVED: Lifetimes = { access: 1, refresh: 2, code: 1 };

/** One way of running the sequences on a store. */
export interface Variant {
  readonly name: string;
  readonly ttl: Lifetimes;
  readonly runs: number;
  /** 2: the administrative operations go through a second instance (its own store connection) on the same data. */
  readonly instances: 1 | 2;
  /** 'jwt': RFC 9068 access tokens under `jwt: { checkRevocation: true }`, which must answer as opaque ones do. */
  readonly format?: 'opaque' | 'jwt';
  readonly commands: fc.Arbitrary<Iterable<Cmd>>;
}

/** The replay path of a failure being replayed, for fc.commands (it rebuilds the shrunk command list from it). */
function replay(): { replayPath?: string } {
  return REPLAY_PATH === undefined ? {} : { replayPath: REPLAY_PATH };
}

/** The command mix of the long-lived variants: nothing lets time pass on purpose. */
function longLivedCommands(): fc.Arbitrary<Iterable<Cmd>> {
  return fc.commands<Model, Real, false>(commandArbitraries(), { maxCommands: MAX_COMMANDS, size: 'max', ...replay() });
}

/** The command mix of the short-lived variants: sleeps and sure expiries among the rest, in shorter sequences. */
function shortLivedCommands(): fc.Arbitrary<Iterable<Cmd>> {
  return fc.commands<Model, Real, false>(
    [
      ...commandArbitraries(),
      ...weighted(2, fc.constantFrom(300, 700, 1100, 2100).map((ms) => new Sleep(ms))),
      ...weighted(3, fc.tuple(fc.constantFrom<'access' | 'refresh' | 'code'>('access', 'access', 'refresh', 'code'), index).map(([k, i]) => new Expire(k, i))),
    ],
    { maxCommands: 30, size: 'max', ...replay() },
  );
}

/** The variants, in the order each store runs them (their index also places their port). */
export const VARIANTS: readonly Variant[] = [
  {
    name: 'JWT access tokens', ttl: LONG_LIVED, runs: JWT_RUNS, instances: 1, format: 'jwt',
    commands: longLivedCommands(),
  },
  {
    name: 'short-lived JWT access tokens', ttl: SHORT_LIVED, runs: EXPIRY_RUNS, instances: 1, format: 'jwt',
    commands: shortLivedCommands(),
  },
  {
    name: 'JWT access tokens, a second instance administering', ttl: LONG_LIVED, runs: JWT_RUNS, instances: 2, format: 'jwt',
    commands: longLivedCommands(),
  },
  {
    name: 'long-lived tokens', ttl: LONG_LIVED, runs: RUNS, instances: 1,
    commands: longLivedCommands(),
  },
  {
    name: 'short-lived tokens', ttl: SHORT_LIVED, runs: EXPIRY_RUNS, instances: 1,
    commands: shortLivedCommands(),
  },
  {
    name: 'a second instance administering', ttl: LONG_LIVED, runs: TWO_INSTANCE_RUNS, instances: 2,
    commands: longLivedCommands(),
  },
];

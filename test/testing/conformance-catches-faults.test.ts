// The conformance suite fails every faulty store on every run, on the rule the fault breaks, and passes correct ones.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { CONFORMANCE_RULES, checkStoreConformance, type StoreConformanceOptions } from '../../src/testing/index.js';
import { createToyStore, openToyPeer, simulateToyOutage, type Fault, type ToyStoreOptions } from './toy-store.js';

/** How many times each faulty store goes through the suite: every run must fail. */
const RUNS = 5;

/** The one rule whose name starts with `prefix` (a typo or a rename fails loudly here, not silently). */
function rule(prefix: string): string {
  const matches = CONFORMANCE_RULES.filter((r) => r.name.startsWith(prefix)).map((r) => r.name);
  if (matches.length !== 1) throw new Error(`${matches.length} rules start with ${JSON.stringify(prefix)}`);
  return matches[0]!;
}

const PEER_SAVE_RACES = [
  rule('across instances (openPeer): saveTokens racing revokeGrant'),
  rule('across instances (openPeer): saveTokens racing revokeClientTokens(clientId)'),
  rule('across instances (openPeer): saveTokens racing revokeClientTokens(clientId, userId)'),
];
const SAVE_RACES = [
  rule('saveTokens racing revokeGrant'),
  rule('saveTokens racing revokeClientTokens(clientId),'),
  rule('saveTokens racing revokeClientTokens(clientId, userId)'),
  ...PEER_SAVE_RACES,
];
const PEER_CONSUME = rule('across instances (openPeer): of N concurrent consumeCode');
const PEER_UPDATE = rule('across instances (openPeer): updateClient disabling');
const PEER_ONLY_IF_NONE = rule('across instances (openPeer): of N concurrent onlyIfNone');
const PEER_HITS = rule('across instances (openPeer): of N concurrent hits');
const PEER_DISABLE = rule('across instances (openPeer): of N concurrent disableClient');
const PEER_ENABLE = rule('across instances (openPeer): of N concurrent enableClient');
const PEER_REPLACE = rule('across instances (openPeer): of N concurrent replaceSigningKeys');
const PEER_DELETE = rule('across instances (openPeer): of 4 concurrent deletes of one kid');
const PEER_REVOKE = rule('across instances (openPeer): concurrent revocations of one grant or one access token');
const PEER_RACES = [
  ...PEER_SAVE_RACES, PEER_CONSUME, PEER_UPDATE, PEER_ONLY_IF_NONE, PEER_HITS, PEER_DISABLE, PEER_ENABLE, PEER_REPLACE, PEER_DELETE, PEER_REVOKE,
];
const EXACT_IDS = [
  rule('codes compare codeHash exactly'),
  rule('tokens compare tokenHash exactly'),
  rule('revokeGrant compares grantId exactly'),
  rule('integrations compare clientId exactly'),
  rule('revokeClientTokens compares client and user ids exactly'),
  rule('consents compare user and client ids exactly'),
  rule('kids compare exactly'),
  rule('deleteSigningKey deletes exactly the kid given'),
  rule('rate-limit keys compare exactly'),
];
const BINARY_ORDER = [rule('listClients orders by createdAt'), rule('listConsents returns only'), rule('listSigningKeys orders by createdAt')];
const OUTAGE = [rule('outage: while the backend is out')];
const BACKEND_TIME = [rule('backendTime resolves')];
const CLIENT_COPIES = [rule('clientCopies keeps only'), rule('saveTokens saves under the clientRevision'), rule('saveTokens refuses the clientRevision')];
const CLIENT_TOMBSTONES = [
  rule('after revokeClientTokens(clientId), saveTokens refuses'),
  rule('after revokeClientTokens(clientId), a save with newGrant'),
  rule("after revokeClientTokens(clientId, userId), saveTokens refuses"),
  rule('a later revokeClientTokens moves the revocation moment forward'),
  rule('a revocation whose moment is earlier than the one recorded'),
  rule('saveTokens racing revokeClientTokens(clientId),'),
  rule('saveTokens racing revokeClientTokens(clientId, userId)'),
  ...PEER_SAVE_RACES.slice(1),
];
const GRANT_TOMBSTONES = [
  rule('after revokeClientTokens(clientId), a grant whose refresh token'),
  rule('after revokeClientTokens(clientId, userId), a grant whose refresh token'),
];

const PEER_FEED = [
  rule('revocations.mark() moves for revokeAccessToken and revokeGrant made through another store'),
  rule('revocations.mark() moves for revokeClientTokens made through another store'),
];

/** Each fault, the toy-store settings it is tried with, and exactly the rules it must fail. */
const CASES: { fault: Fault; settings: ToyStoreOptions[]; fails: string[]; runs?: number }[] = [
  {
    fault: 'save-checks-tombstones-a-turn-before-inserting',
    // With leading round trips the window opens only at an offset: the sweep, not luck, finds it.
    settings: [0, 6, 12].flatMap((saveLeadingTurns) => [
      { turn: 'macrotask', saveLeadingTurns },
      { turn: 'microtask', saveLeadingTurns },
    ]),
    // The refresh racing revokeGrant in the revocation races lands in the same gap.
    fails: [...SAVE_RACES, rule('concurrent revocations of one grant or one access token'), PEER_REVOKE],
  },
  { fault: 'ids-ignore-case', settings: [{}], fails: [...EXACT_IDS, ...BINARY_ORDER] },
  { fault: 'ids-ignore-trailing-spaces', settings: [{}], fails: EXACT_IDS },
  { fault: 'raw-errors-in-outage', settings: [{}], fails: OUTAGE },
  // Each optional or later method on its own: one the outage rule forgot to call would pass with a raw error (a 500).
  {
    fault: 'raw-error-in-one-method-in-outage',
    settings: [
      'clients.disableClient', 'clients.enableClient', 'clients.deleteClient', 'keys.deleteSigningKey', 'keys.replaceSigningKeys',
      'clients.createClient', 'clients.updateClient', 'clients.listClients', 'tokens.revokeClientTokens', 'backendTime',
    ].map((rawErrorMethod) => ({ rawErrorMethod })),
    fails: OUTAGE,
  },
  // A save split over two statements, for each form the router saves in: the plain call alone never shows either.
  { fault: 'save-leaves-access-token-in-outage', settings: [{ splitSave: 'refresh' }, { splitSave: 'newGrant' }], fails: OUTAGE },
  { fault: 'raw-error-saving-refresh-or-grant-in-outage', settings: [{ splitSave: 'refresh' }, { splitSave: 'newGrant' }], fails: OUTAGE },
  // No race, and each run waits out the suite's recovery time (5 s): two runs.
  { fault: 'no-recovery-after-outage', settings: [{}], fails: OUTAGE, runs: 2 },
  { fault: 'only-if-none-checks-a-turn-before-inserting', settings: [{ turn: 'macrotask' }, { turn: 'microtask' }], fails: [rule('of N concurrent onlyIfNone saves'), PEER_ONLY_IF_NONE] },
  { fault: 'delete-signing-key-checks-a-turn-before-deleting', settings: [{ turn: 'macrotask' }, { turn: 'microtask' }], fails: [rule('of 4 concurrent deletes of one kid, exactly'), PEER_DELETE] },
  {
    fault: 'revoke-checks-a-turn-before-writing',
    settings: [{ turn: 'macrotask' }, { turn: 'microtask' }],
    fails: [rule('concurrent revocations of one grant or one access token'), PEER_REVOKE],
  },
  // A revokeGrant that deletes a round trip before its tombstone: only a refresh racing it, while the grant holds tokens, shows it.
  {
    fault: 'revoke-grant-deletes-a-turn-before-tombstone',
    settings: [{ turn: 'macrotask' }, { turn: 'microtask' }, { turn: 'macrotask', saveLeadingTurns: 12 }],
    fails: [rule('concurrent revocations of one grant or one access token'), PEER_REVOKE],
  },
  // Its answer is wrong only for a grant holding no token: only concurrent revocations of such a grant show it.
  {
    fault: 'revoke-empty-grant-checks-a-turn-before-writing',
    settings: [{ turn: 'macrotask' }, { turn: 'microtask' }],
    fails: [rule('concurrent revocations of one grant or one access token'), PEER_REVOKE],
  },
  {
    fault: 'replace-signing-keys-deletes-what-it-listed',
    settings: [{ turn: 'macrotask' }, { turn: 'microtask' }],
    fails: [rule('of N concurrent replaceSigningKeys calls exactly one key'), PEER_REPLACE],
  },
  { fault: 'replace-signing-keys-stops-at-a-known-kid', settings: [{}], fails: [rule('replaceSigningKeys inserts the record, deletes every other key')] },
  { fault: 'update-client-reads-then-writes-whole-record', settings: [{ turn: 'macrotask' }, { turn: 'microtask' }], fails: [rule('updateClient disabling racing'), PEER_UPDATE] },
  { fault: 'disable-client-reads-a-turn-before-writing', settings: [{ turn: 'macrotask' }, { turn: 'microtask' }], fails: [rule('of N concurrent disableClient calls on'), PEER_DISABLE] },
  { fault: 'enable-client-reads-a-turn-before-writing', settings: [{ turn: 'macrotask' }, { turn: 'microtask' }], fails: [rule('of N concurrent enableClient calls on'), PEER_ENABLE] },
  { fault: 'consume-code-checks-a-turn-before-marking', settings: [{ turn: 'macrotask' }, { turn: 'microtask' }], fails: [rule('of N concurrent consumeCode calls'), PEER_CONSUME] },
  {
    fault: 'revoke-client-tokens-without-tombstones',
    settings: [{}],
    fails: [...CLIENT_TOMBSTONES, ...GRANT_TOMBSTONES, rule('an integration created again with a deleted id revives none')],
  },
  { fault: 'revoke-client-tokens-without-grant-tombstones', settings: [{}], fails: GRANT_TOMBSTONES },
  { fault: 'revocation-keeps-first-moment', settings: [{}], fails: [rule('a later revokeClientTokens moves')] },
  {
    fault: 'user-revocation-refuses-whole-client',
    settings: [{}],
    fails: [rule('revokeClientTokens(clientId, userId) leaves saves'), rule('revokeClientTokens compares client and user ids exactly')],
  },
  // Only when the hook cuts this store alone can a peer revoke meanwhile; cutting the whole backend checks no gap.
  { fault: 'feed-keeps-mark-through-outage', settings: [{ outageCutsStoreOnly: true }], fails: OUTAGE },
  { fault: 'revocation-overwrites-moment', settings: [{}], fails: [rule('a revocation whose moment is earlier than the one recorded')] },
  { fault: 'save-ignores-client-revision', settings: [{}], fails: CLIENT_COPIES.slice(1) },
  { fault: 'new-grant-skips-grant-tombstone', settings: [{}], fails: [rule('newGrant is a hint, not a pass')] },
  {
    fault: 'feed-moves-before-the-delete',
    settings: [{ turn: 'macrotask' }, { turn: 'microtask' }],
    // The peer rules catch it too: the peer's revocation leaves the mark where a lookup found the token.
    fails: [rule('revocations.mark() moves no earlier than revokeAccessToken'), rule('revocations.mark() moves no earlier than revokeClientTokens'), ...PEER_FEED],
    runs: 2,
  },
  {
    fault: 'feed-counts-own-revocations-only',
    settings: [{ turn: 'macrotask' }, { turn: 'microtask' }],
    fails: PEER_FEED,
    // No race: a feed deaf to the peer fails the same way every time, after waiting PEER_LATENCY_LIMIT_MS per rule.
    runs: 2,
  },
  {
    fault: 'pair-keys-joined-by-colon',
    settings: [{}],
    fails: [rule("revokeClientTokens(clientId, userId) keeps apart pairs"), rule('consents keep apart (user, client) pairs')],
  },
  // Atomic only because this store object's calls never overlap: every race through one store passes, so only
  // the races across instances can fail it.
  {
    fault: 'atomic-in-process-only',
    settings: [{ turn: 'macrotask' }, { turn: 'microtask' }, { turn: 'macrotask', saveLeadingTurns: 12 }],
    fails: PEER_RACES,
  },
  // Random digests share no 40-character prefix, so only twins made to share one show it.
  { fault: 'hashes-cut-to-40-characters', settings: [{}], fails: [rule('codes and tokens keep their hashes whole')] },
  // Consistent within one zone, so only a change of zone between the save and the read shows it.
  { fault: 'dates-in-local-wall-clock', settings: [{}], fails: [rule("dates do not depend on the process's time zone")] },
  { fault: 'backend-clock-two-hours-ahead', settings: [{}], fails: BACKEND_TIME },
  { fault: 'rate-limit-hit-reads-then-writes', settings: [{ turn: 'macrotask' }, { turn: 'microtask' }], fails: [rule('of N concurrent hits on one key'), PEER_HITS] },
];

function toyOptions(settings: ToyStoreOptions, faults: Fault[]): StoreConformanceOptions {
  return {
    name: 'toy', createStore: () => createToyStore({ ...settings, faults }), simulateOutage: simulateToyOutage, openPeer: openToyPeer,
    outageSparesPeer: settings.outageCutsStoreOnly === true,
  };
}

describe('the conformance suite catches each fault on every run', () => {
  for (const { fault, settings, fails, runs = RUNS } of CASES) {
    for (const setting of settings) {
      it(`${fault} ${JSON.stringify(setting)}: fails ${fails.length} rule(s) in each of ${runs} runs`, { timeout: 30_000 }, async () => {
        const expected = [...fails].sort();
        for (let run = 0; run < runs; run++) {
          const report = await checkStoreConformance({ ...toyOptions(setting, [fault]), only: (name) => fails.includes(name) });
          expect(report.failed.map((f) => f.rule).sort(), `run ${run + 1}`).toEqual(expected);
          expect(report.passed).toEqual([]);
        }
      });
    }
  }

  it('each fault breaks exactly the rules listed for it: nothing else fails (the whole suite, once per fault)', { timeout: 60_000 }, async () => {
    for (const { fault, settings, fails } of CASES) {
      // A short sweep: this checks which rules fail, not how reliably (the runs above do).
      const report = await checkStoreConformance({ ...toyOptions(settings[0]!, [fault]), rounds: 24 });
      expect(report.failed.map((f) => f.rule).sort(), fault).toEqual([...fails].sort());
    }
  });
});

describe('the conformance suite passes correct stores', () => {
  it('the memory store passes every rule; only the outage rule (no backend to cut), the copy rules (it keeps no copies), the peer rules (no second process) and the backendTime rule (its backend is this process) are skipped', async () => {
    const report = await checkStoreConformance({ name: 'memory', createStore: () => createMemoryStore() });
    expect(report.failed.map((f) => `${f.rule}: ${f.error.message}`)).toEqual([]);
    expect(report.skipped.map((s) => s.rule).sort()).toEqual([...OUTAGE, ...CLIENT_COPIES, ...PEER_FEED, ...PEER_RACES, ...BACKEND_TIME].sort());
    expect(report.passed).toHaveLength(CONFORMANCE_RULES.length - 1 - CLIENT_COPIES.length - PEER_FEED.length - PEER_RACES.length - BACKEND_TIME.length);
  });

  for (const setting of [
    { turn: 'macrotask' }, { turn: 'microtask' }, { turn: 'macrotask', saveLeadingTurns: 12 }, { turn: 'macrotask', outageCutsStoreOnly: true },
  ] as ToyStoreOptions[]) {
    it(`the toy store without faults ${JSON.stringify(setting)} passes every rule, the outage rule included`, async () => {
      const report = await checkStoreConformance(toyOptions(setting, []));
      expect(report.failed.map((f) => `${f.rule}: ${f.error.message}`)).toEqual([]);
      expect(report.skipped).toEqual([]);
      expect(report.passed).toHaveLength(CONFORMANCE_RULES.length);
    });
  }
});

describe('the failure messages of the race rules name the cause', () => {
  /** The messages of the rules `faults` fail, by rule name, with the rules limited to `rules`. */
  async function messagesOf(faults: Fault[], rules: string[]): Promise<Map<string, string>> {
    const report = await checkStoreConformance({ ...toyOptions({ turn: 'macrotask' }, faults), only: (name) => rules.includes(name), rounds: 24 });
    return new Map(report.failed.map((f) => [f.rule, f.error.message]));
  }
  /** Claims the store is atomic in one process as a fact, not on the condition that the race through one store passes. */
  const UNCONDITIONAL = /(^|; )the store is atomic within one process only/;

  it('a race across instances blames an in-process lock only if the same race through one store passes', { timeout: 30_000 }, async () => {
    const cases: [Fault, string, string][] = [
      ['consume-code-checks-a-turn-before-marking', rule('of N concurrent consumeCode'), PEER_CONSUME],
      ['disable-client-reads-a-turn-before-writing', rule('of N concurrent disableClient'), PEER_DISABLE],
      ['replace-signing-keys-deletes-what-it-listed', rule('of N concurrent replaceSigningKeys'), PEER_REPLACE],
    ];
    for (const [fault, single, peer] of cases) {
      const messages = await messagesOf([fault], [single, peer]);
      expect([...messages.keys()].sort(), fault).toEqual([single, peer].sort());
      expect(messages.get(peer), fault).not.toMatch(UNCONDITIONAL);
      expect(messages.get(peer), fault).toMatch(/if the same race through one store \(".+"\) passes, the store is atomic within one process only/);
    }
    const inProcess = await messagesOf(['atomic-in-process-only'], [PEER_CONSUME, PEER_REPLACE, PEER_DISABLE, PEER_HITS, PEER_DELETE, PEER_REVOKE]);
    expect(inProcess.size).toBe(6);
    for (const [name, message] of inProcess) expect(message, name).not.toMatch(UNCONDITIONAL);
  });

  it('the replaceSigningKeys race through one store says first that a transaction alone does not serialise two replacements', { timeout: 30_000 }, async () => {
    const single = rule('of N concurrent replaceSigningKeys');
    const message = (await messagesOf(['replace-signing-keys-deletes-what-it-listed'], [single])).get(single);
    expect(message).toMatch(/; every replacement must be serialised with every other one, and a transaction alone does not do it/);
    expect(message).toMatch(/pg_advisory_xact_lock/);
    expect(message).not.toMatch(/must be one transaction/);
  });
});

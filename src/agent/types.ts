import type { AudienceVersion } from '../audiences/index.js';
import type { Content, Page } from '../pages/index.js';
import type { Person } from '../persons/index.js';
import type { Topic } from '../topics/index.js';

/** The page as a generator sees it: what it is about and what it shows. */
export type AgentPage = Pick<Page, 'pageId' | 'name' | 'title' | 'pageContext' | 'pageType'> & { content: Content };

export interface AgentAudience {
  audienceId: string;
  /** Its effectiveName. */
  name: string;
  personRouteKey: string | null;
  /** A segment audience's rules in plain words ("Visitors whose UTM source is linkedin"); absent for others. */
  segment?: string;
}

export interface AgentAccount {
  accountId: string;
  name: string;
  domain: string;
}

export interface AgentLog {
  source: string;
  type: string;
  payload: Record<string, unknown>;
  createdAt: string;
}

/** Everything a generator is given for one version (docs/agent.md). */
export interface GeneratorInput {
  page: AgentPage;
  audience: AgentAudience;
  /** The version being generated, as the API shows it (its supplementaryContext, isNewPageAgent, ...). */
  version: AudienceVersion;
  /** The audience's person, when it has one. */
  person: Person | null;
  /** The person's account (same domain), when there is one. */
  account: AgentAccount | null;
  /** The 20 newest of each, newest first; empty unless the generator `readsHistory`. */
  personLogs: AgentLog[];
  accountLogs: AgentLog[];
  /** The tenant's topics with their entries, in sortOrder (at most 50 topics of 50 entries); empty unless `readsHistory`. */
  topics: Topic[];
}

/**
 * A generator writes one version's content. It returns what it made; the worker checks it against
 * the content schema (anything else is a failure, retried like any other). It throws
 * `GenerationError` to say why it failed in words safe to show (`failureReason`), and when to try
 * again at the earliest.
 */
export interface Generator {
  readonly name: string;
  /**
   * True when a generation runs in this process without waiting on anything (no I/O): the worker
   * then claims large batches and AGENT_CONCURRENCY does not apply. False: at most
   * AGENT_CONCURRENCY generations are in flight at once.
   */
  readonly inProcess: boolean;
  /** Whether it reads the logs and topics; they are only gathered for a generator that does. */
  readonly readsHistory: boolean;
  /** `signal` aborts when the generation runs out of time or the worker stops. */
  generate(input: GeneratorInput, signal: AbortSignal): Promise<unknown>;
}

export class GenerationError extends Error {
  override name = 'GenerationError';
  constructor(
    /** Shown as the version's failureReason: never a secret. */
    readonly reason: string,
    /** The endpoint asked to wait this long (Retry-After) before the next try. */
    readonly retryAfterMs?: number,
  ) {
    super(reason);
  }
}

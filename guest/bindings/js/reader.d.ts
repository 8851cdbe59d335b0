/**
 * `BulkFactorReader` (reader.js): what a service reads before admitting bulk work
 * (docs/behaviour.md §9.1). Re-exported by index.d.ts, the package's types.
 */
import type { Channel, ChannelVerdict, FactorReading } from './index.js';

/** The Redis key the sentinel publishes to unless configured otherwise. */
export declare const DEFAULT_CACHE_KEY: 'capacity:state';
/** A document older than this (seconds) is stale: three missed minute ticks. */
export declare const DEFAULT_MAX_AGE: 180;
/** How far ahead of this host's clock a document's `decided_at` may be (seconds). */
export declare const DEFAULT_MAX_SKEW: 30;
/** How long the parameter's answer is reused (seconds): 1,000 readers call it about 33 times a
 * second, within SSM's 40 for a standard parameter. */
export declare const DEFAULT_PARAMETER_REFRESH: 30;

/** Where a reader's log lines go: `console` by default. */
export interface ReaderLogger {
  warn(message: string): unknown;
  error(message: string): unknown;
  info(message: string): unknown;
}

export interface BulkFactorReaderOptions {
  /** The cache: a `redis://`, `rediss://` or `unix://` URL (needs the `redis` package), `ssm:NAME`
   * (needs `@aws-sdk/client-ssm`) or a file path (optionally `file:PATH`). */
  cache?: string | null;
  /** The parameter, in the same forms (usually `ssm:/capacity/state`). Either may be omitted, not
   * both. */
  parameter?: string | null;
  /** The Redis key; default `capacity:state`. */
  cacheKey?: string;
  /** The oldest a usable document may be, in whole seconds (1 to 2^32-1); default 180. */
  maxAge?: number;
  /** How far a document's `decided_at` may be ahead of this clock, in whole seconds (0 to
   * 2^32-1); default 30. */
  maxSkew?: number;
  /** How long an answer is reused, in seconds (may be fractional; ±25 % at random so a fleet's
   * fetches spread out; 0: every read fetches); default 10. */
  refresh?: number;
  /** How long the parameter's answer is reused, in seconds (at most `maxAge / 3`; 0: every fetch
   * that needs the parameter calls it); after failures the parameter backs off exponentially,
   * up to `maxAge / 3`, ±25 %. Default 30, or `maxAge / 3` when that is shorter. */
  parameterRefresh?: number;
  /** The bound of each channel's read, in seconds (> 0); default 2. */
  timeout?: number;
  /** Where trouble is logged, once when it starts and once when it ends; default `console`. */
  logger?: ReaderLogger;
  /** The clock documents are judged by, in unix seconds; default `Date.now() / 1000`. */
  clock?: () => number;
}

/** What a reader has done, for a service to export as metrics. */
export interface ReaderCounters {
  /** `read()` calls, and how many of them fetched (the rest answered from memory). */
  calls: number;
  fetches: number;
  /** Fetches that ended without a usable document (full capacity). */
  fullCapacity: number;
  /** Fetches answered with the remembered document (neither channel gave a usable one). */
  remembered: number;
  /** Calls made to the parameter (the rest of its reads reused its last answer). */
  parameterCalls: number;
  /** Channel reads by channel and verdict (only the verdicts seen). */
  reads: Record<Channel, Partial<Record<Exclude<ChannelVerdict, 'not-read'>, number>>>;
}

/**
 * Reads the published bulk factor from the cache and, when the cache's document is not usable,
 * the parameter (docs/behaviour.md §9.1). One reader serves a whole process: one client per
 * channel for its life, answers reused for `refresh` seconds, concurrent reads sharing one fetch.
 * Bad settings throw a RangeError or TypeError naming the setting.
 */
export declare class BulkFactorReader {
  constructor(options: BulkFactorReaderOptions);
  readonly cacheKey: string;
  readonly maxAge: number;
  readonly maxSkew: number;
  readonly refresh: number;
  readonly parameterRefresh: number;
  readonly timeout: number;
  /** The factor to admit with now. Never rejects for a failed read (the reading says why);
   * rejects after `close()`. The reading is frozen and shared by concurrent callers. */
  read(): Promise<Readonly<FactorReading>>;
  /** A snapshot of the counters. */
  counters(): ReaderCounters;
  /** Waits for a fetch in flight, then closes the channels' clients. */
  close(): Promise<void>;
}

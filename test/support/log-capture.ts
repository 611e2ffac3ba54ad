// A logger whose lines the test reads back: pino writes JSON lines into memory.
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { Config } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly dependency?: string;
  readonly err?: { stack?: string };
  readonly [field: string]: unknown;
}

export const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

export function capturingLogger(config: Pick<Config, 'logLevel'> = { logLevel: 'info' }): {
  logger: Logger;
  lines: LogLine[];
} {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text.trim()) lines.push(JSON.parse(text) as LogLine);
      done();
    },
  });
  return { logger: createLogger(config, destination), lines };
}

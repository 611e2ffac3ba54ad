// Where `paygate listen` keeps its resume point — the id of the last event it
// forwarded — so a listen started again forwards what came while none ran.
// One small file per (gateway URL, shop) in the user's state directory
// ($XDG_STATE_HOME/paygate/listen, else ~/.local/state/paygate/listen): two
// listens of different shops or gateways never write the same file. Each write
// goes to a file beside it and is renamed over it, so a listen killed
// mid-write leaves the previous resume point, never half of one.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { CliIo } from './cli-command.ts';

interface SavedResumePoint {
  readonly gateway_url: string;
  readonly shop_id: string;
  readonly last_event_id: string;
  readonly saved_at: string;
}

/** The directory of the resume points: the XDG state directory's `paygate/listen`. */
function listenStateDirectory(env: CliIo['env']): string {
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'paygate', 'listen');
}

export class ListenResumePoint {
  readonly path: string;
  readonly #gatewayUrl: string;
  readonly #shopId: string;

  constructor(env: CliIo['env'], gatewayUrl: string, shopId: string) {
    this.#gatewayUrl = gatewayUrl;
    this.#shopId = shopId;
    // Named by a digest: a URL is no file name, and the name stays short whatever the URL.
    const name = createHash('sha256').update(`${gatewayUrl}\n${shopId}`).digest('hex').slice(0, 32);
    this.path = join(listenStateDirectory(env), `${name}.json`);
  }

  /** The saved event id; undefined when none was saved (or the file is not one of ours). */
  async read(): Promise<string | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const saved = JSON.parse(text) as Partial<SavedResumePoint>;
      const ours = saved.gateway_url === this.#gatewayUrl && saved.shop_id === this.#shopId;
      return ours && typeof saved.last_event_id === 'string' && saved.last_event_id !== ''
        ? saved.last_event_id
        : undefined;
    } catch {
      return undefined;
    }
  }

  async write(lastEventId: string, now: Date): Promise<void> {
    const saved: SavedResumePoint = {
      gateway_url: this.#gatewayUrl,
      shop_id: this.#shopId,
      last_event_id: lastEventId,
      saved_at: now.toISOString(),
    };
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const beside = `${this.path}.${process.pid}.tmp`;
    await writeFile(beside, `${JSON.stringify(saved)}\n`, { mode: 0o600 });
    await rename(beside, this.path);
  }
}

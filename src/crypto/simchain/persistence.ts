// Saving the simulated chain to a JSON file so a sandbox survives restarts.
// bigints are written as tagged strings ("123n"); the file is written to a
// temporary name and renamed, so a crash mid-write leaves the last good copy.
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { ChainParameters } from './chain-parameters.ts';
import { SimulatedChain, type ChainSnapshot } from './simulated-chain.ts';

const BIGINT_TEXT = /^-?\d+n$/;

export async function saveChain(chain: SimulatedChain, file: string): Promise<void> {
  const text = JSON.stringify(chain.snapshot(), (_key, value: unknown) =>
    typeof value === 'bigint' ? `${value}n` : value,
  );
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode: 0o600 });
  await rename(temporary, file);
}

/** The saved chain, or undefined when the file does not exist yet. */
export async function loadChain(
  file: string,
  options: { readonly seed: string; readonly parameters?: Partial<ChainParameters> },
): Promise<SimulatedChain | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const snapshot = JSON.parse(text, (_key, value: unknown) =>
    typeof value === 'string' && BIGINT_TEXT.test(value) ? BigInt(value.slice(0, -1)) : value,
  ) as ChainSnapshot;
  return new SimulatedChain({
    seed: options.seed,
    ...(options.parameters ? { parameters: options.parameters } : {}),
    restore: snapshot,
  });
}

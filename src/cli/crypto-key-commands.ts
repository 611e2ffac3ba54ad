// `paygate crypto keys import`: seals the live signing key (a BIP39 mnemonic or
// an xprv) into the database (crypto/keys/sealed-signing-keys.ts). The key is
// read from stdin, or from a file named by --file (mode 0600), never from argv,
// where every user of the machine could read it. `paygate crypto keys list`
// shows which books have a sealed key, by account xpub (never the key).
import { parseArgs } from 'node:util';
import { loadApiRoleKeys, loadSignerKeys } from '../crypto/keys/key-material.ts';
import { importSigningKey, listSigningKeys, SigningKeyImportError } from '../crypto/keys/sealed-signing-keys.ts';
import { CliUsageError, type CliCommand, type CliIo } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { printTable } from './table.ts';

/** A mnemonic of 24 words or an xprv is far below this. */
const STDIN_MAX_BYTES = 4096;

async function readStdin(io: CliIo): Promise<string> {
  if (io.stdin === undefined) throw new CliUsageError('no standard input: give the key on stdin or with --file PATH');
  if (io.stdin.isTTY) io.err('paste the mnemonic or the xprv, then press Ctrl-D');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of io.stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    size += buffer.length;
    if (size > STDIN_MAX_BYTES)
      throw new CliUsageError(`standard input is larger than a key (${STDIN_MAX_BYTES} bytes)`);
    chunks.push(buffer);
  }
  const joined = Buffer.concat(chunks);
  const text = joined.toString('utf8');
  joined.fill(0);
  for (const chunk of chunks) chunk.fill(0);
  return text;
}

export const cryptoKeysImportCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { file: { type: 'string' } } });
    const fromFile = values.file === undefined ? undefined : await loadSignerKeys(values.file, '--file');
    const text = fromFile?.text ?? (await readStdin(io));
    const origin = fromFile ? `--file ${values.file}` : 'standard input';
    // When the API role's xpub is configured, the key must be that account's.
    const expectedXpub =
      config.tronXpubFile === undefined
        ? undefined
        : (await loadApiRoleKeys(config.tronXpubFile, 'PAYGATE_TRON_XPUB_FILE')).depositAddressKey.xpub;
    try {
      const { xpub, outcome } = await withCliContext(config, (context) =>
        importSigningKey(context, 'live', text, { origin, expectedXpub }),
      );
      io.out(
        outcome === 'imported'
          ? `sealed the live signing key (account xpub ${xpub})`
          : `the live signing key (account xpub ${xpub}) was already sealed; nothing changed`,
      );
      if (config.tronXpubFile === undefined)
        io.out(`write that xpub to the file PAYGATE_TRON_XPUB_FILE names (mode 0600)`);
      if (fromFile) io.out(`delete the clear copy now: ${values.file}`);
      return 0;
    } catch (error) {
      if (!(error instanceof SigningKeyImportError)) throw error;
      io.err(`paygate: ${error.message}`);
      return 1;
    }
  },
};

export const cryptoKeysListCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
    const rows = await withCliContext(config, (context) => listSigningKeys(context.db));
    const views = rows.map((row) => ({ book: row.book, xpub: row.xpub, sealed_at: row.created_at.toISOString() }));
    if (values.json) io.out(JSON.stringify(views));
    else
      printTable(
        io.out,
        views,
        [
          { header: 'BOOK', value: (view) => view.book },
          { header: 'XPUB', value: (view) => view.xpub },
          { header: 'SEALED', value: (view) => view.sealed_at },
        ],
        'no sealed signing keys',
      );
    return 0;
  },
};

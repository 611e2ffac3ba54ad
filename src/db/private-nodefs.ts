// The embedded database's files hold everything the gateway keeps (webhook
// secrets, keys once encrypted, payments), so no other user of the machine may
// read them, whatever the process umask. PGlite's PostgreSQL (through
// Emscripten's NODEFS) creates files and then chmods them 0666; this file system
// keeps the owner's bits and drops the group's and others' on every create and
// chmod, so files are 0600 and folders 0700 as they are written.
import { NodeFS } from '@electric-sql/pglite/nodefs';

const OWNER_ONLY = ~0o077;

interface NodeOps {
  mknod(parent: unknown, name: string, mode: number, dev: unknown): unknown;
  setattr(node: unknown, attr: { mode?: number | null }): unknown;
}

export class PrivateNodeFS extends NodeFS {
  override async init(...args: Parameters<NodeFS['init']>): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(...args);
    const ownerOnly = (module: { NODEFS: { node_ops: NodeOps } }) => {
      const ops = module.NODEFS.node_ops;
      const { mknod, setattr } = ops;
      ops.mknod = (parent, name, mode, dev) => mknod(parent, name, mode & OWNER_ONLY, dev);
      ops.setattr = (node, attr) => setattr(node, attr.mode == null ? attr : { ...attr, mode: attr.mode & OWNER_ONLY });
    };
    // Runs after NodeFS's own preRun has mounted NODEFS; every node shares these operations.
    const preRun = [...((emscriptenOpts.preRun as unknown[] | undefined) ?? []), ownerOnly];
    return { emscriptenOpts: { ...emscriptenOpts, preRun } as typeof emscriptenOpts };
  }
}

const { PGlite } = await import('@electric-sql/pglite');
const base = [
  '--single',
  '-F',
  '-O',
  '-j',
  '-c',
  'search_path=public',
  '-c',
  'exit_on_error=false',
  '-c',
  'log_checkpoints=false',
  '-c',
  'max_worker_processes=0',
  '-c',
  'max_parallel_workers=0',
  '-c',
  'max_parallel_workers_per_gather=0',
  '-c',
  'io_method=sync',
  '-c',
  'max_parallel_maintenance_workers=0',
];
const extra = process.argv[3] ? ['-c', `shared_buffers=${process.argv[3]}`, '-c', 'max_connections=5'] : [];
const t1 = performance.now();
const p = await PGlite.create({ dataDir: process.argv[2], startParams: [...base, ...extra] });
const t2 = performance.now();
const r = await p.query('show shared_buffers');
await p.close();
console.log(process.argv[3] ?? 'default', (t2 - t1).toFixed(0), 'ms', JSON.stringify(r.rows));

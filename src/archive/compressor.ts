import { Worker } from 'node:worker_threads';

/**
 * Gzips a purge's archive chunks on one thread of its own that runs at a lower CPU priority than
 * the rest of the process (Linux: nice 10 for that thread alone).
 *
 * Why: compression is most of the CPU a purge spends outside Redis (a Celery purge of 1M messages
 * compresses about 1 GB), and it is the one part that can wait. When queue-ops and Redis share
 * the CPUs, gzip on libuv's threads at the same priority as Redis takes turns with it, and every
 * other client of that Redis (its workers, its producers) waits for those turns. At nice 10 the
 * kernel gives Redis the CPU first; the purge then slows down rather than Redis. The thread is
 * made on the first chunk, does not keep the process alive, and goes away once it has had no
 * work for a while (an idle thread holds ~10 MB, which the bot would keep for good).
 *
 * The worker's code is a string run with `eval`: it needs no file of its own, so it works the
 * same from src/ (tsx, the tests), from dist/ and from the command line's bundle.
 */
/** The gzip level of every archive chunk: the fastest (the purge preview's estimate uses it too). */
export const ARCHIVE_GZIP_LEVEL = 1;

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { gzipSync } = require('node:zlib');
const { createHash } = require('node:crypto');
try {
  // On Linux, 0 is this thread alone; elsewhere it would be the whole process, so it stays as is.
  if (process.platform === 'linux') require('node:os').setPriority(0, 10);
} catch {}
parentPort.on('message', ({ id, blocks }) => {
  try {
    const input = blocks.length === 1 ? blocks[0] : Buffer.concat(blocks);
    const body = gzipSync(input, { level: ${ARCHIVE_GZIP_LEVEL} });
    // The file's checksum too: the purging thread has better things to do than hash megabytes.
    const sha256 = createHash('sha256').update(body).digest('hex');
    // Handed back rather than copied, unless it sits in this thread's pool of small buffers.
    const own = body.buffer.byteLength !== Buffer.poolSize;
    parentPort.postMessage({ id, body, sha256 }, own ? [body.buffer] : []);
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) });
  }
});
`;

/** A compressed chunk: one gzip member, and its sha256 (hex). */
export interface Compressed {
  body: Buffer;
  sha256: string;
}

interface Pending {
  resolve: (compressed: Compressed) => void;
  reject: (error: Error) => void;
}

/** The thread and the chunks it has not answered yet (its own: a stopped thread fails only its). */
interface Compressor {
  thread: Worker;
  pending: Map<number, Pending>;
}

/** How long the thread stays after its last chunk: a purge writes chunks far more often. */
const IDLE_MS = 30_000;

let current: Compressor | undefined;
let idleTimer: NodeJS.Timeout | undefined;
let nextId = 0;

/** Ends the compressor thread (the next chunk makes a new one); chunks on their way fail. */
export async function stopCompressor(): Promise<void> {
  clearTimeout(idleTimer);
  const stopping = current;
  current = undefined;
  await stopping?.thread.terminate();
}

function compressor(): Compressor {
  if (current) return current;
  const made: Compressor = { thread: new Worker(WORKER_SOURCE, { eval: true }), pending: new Map() };
  const { thread, pending } = made;
  thread.unref();
  thread.on('message', (reply: { id: number; body?: Uint8Array; sha256?: string; error?: string }) => {
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    if (reply.error !== undefined || !reply.body || !reply.sha256)
      waiting.reject(new Error(`gzip failed: ${reply.error}`));
    else
      waiting.resolve({
        body: Buffer.from(reply.body.buffer, reply.body.byteOffset, reply.body.byteLength),
        sha256: reply.sha256,
      });
  });
  const fail = (error: Error) => {
    if (current === made) current = undefined;
    for (const [id, waiting] of pending) {
      pending.delete(id);
      waiting.reject(error);
    }
  };
  thread.on('error', fail);
  thread.on('exit', (code) => fail(new Error(`the archive compressor stopped (exit code ${code})`)));
  current = made;
  return made;
}

/**
 * The memory of `blocks` that can be handed to the thread instead of copied: whole ArrayBuffers,
 * each once, never Node's shared pool of small buffers (other code's bytes live there too).
 */
function transferable(blocks: readonly Buffer[]): ArrayBuffer[] {
  const owned = new Set<ArrayBuffer>();
  for (const block of blocks) {
    const memory = block.buffer;
    if (memory instanceof ArrayBuffer && memory.byteLength !== Buffer.poolSize) owned.add(memory);
  }
  return [...owned];
}

/**
 * One gzip member (level 1: the archive is on the purge's critical path, speed matters more than
 * ratio) of the concatenation of `blocks`, compressed on the low-priority thread, with its sha256.
 * Chunks are compressed in the order they are given, one after another.
 *
 * The blocks' memory is handed over, not copied: the caller gives them up and must not read them
 * again (they read as empty). Copying was the purging thread's largest single cost after Redis
 * itself: a chunk is ~10 MB, and on a VM that pays for every fresh page the copy's memory was
 * slower still.
 */
export function gzipInBackground(blocks: readonly Buffer[]): Promise<Compressed> {
  const { thread, pending } = compressor();
  const id = nextId++;
  return new Promise<Compressed>((resolve, reject) => {
    // Referenced while a chunk is on its way, so a command line run waits for its archive.
    const settled = () => {
      if (pending.size > 0 || current?.thread !== thread) return;
      thread.unref();
      idleTimer = setTimeout(() => void stopCompressor(), IDLE_MS);
      idleTimer.unref();
    };
    pending.set(id, {
      resolve: (body) => {
        settled();
        resolve(body);
      },
      reject: (error) => {
        settled();
        reject(error);
      },
    });
    if (pending.size === 1) {
      clearTimeout(idleTimer);
      thread.ref();
    }
    thread.postMessage({ id, blocks }, transferable(blocks));
  });
}

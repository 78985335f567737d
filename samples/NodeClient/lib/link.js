'use strict';
// The client side of one Link stream (link.proto) to the program where a construct lives: the
// hello, attaching ends, and operations tagged with op_ids, each answered exactly once by a
// Completed frame (after Chunk frames carrying the rest of a read's value).
const grpc = require('@grpc/grpc-js');
const { link } = require('./protos');
const { channelCredentials, callMetadata, target } = require('./credentials');

/** Chunks a value is split into on the way out; well under any home's gRPC message limit. */
const defaultChunkSize = 64 * 1024;

/** The home poisoned the channel (Completed{POISONED}): every later operation fails the same way. */
class PoisonedError extends Error {}

/** The operation was cancelled at the home before it happened: nothing moved. */
class CancelledError extends Error {}

/** The home refused an attach or an operation (a gRPC status code and its message), or the link broke. */
class LinkError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

class LinkSession {
  /**
   * Opens the Link stream to the program at host:port and exchanges Hello frames.
   * @param {{host: string, port: number}} endpoint the NameEntry's endpoint
   * @param {{clusterKey?: string, program?: string, chunkSize?: number}} options
   */
  static async open(endpoint, options = {}) {
    const session = new LinkSession(endpoint, options);
    await session.hello;
    return session;
  }

  constructor(endpoint, options) {
    this.target = target(endpoint.host, endpoint.port);
    this.chunkSize = options.chunkSize ?? defaultChunkSize;
    this.nextOp = 0;
    this.nextHandle = 0;
    this.pending = new Map();   // op_id (decimal string) -> { parts, resolve, reject }
    this.attaching = new Map(); // handle -> { resolve, reject }
    this.failure = null;
    this.client = new link.Link(this.target, channelCredentials(false), {
      // Notice a home whose machine or network vanished (a home that exits resets the connection).
      'grpc.keepalive_time_ms': 10000,
      'grpc.keepalive_timeout_ms': 5000,
      // A home sends values in chunks of its ChunkSize (1 MiB by default) plus framing.
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
    });
    this.call = this.client.Connect(callMetadata(options.clusterKey));
    this.finished = new Promise((resolve) => this.call.on('status', resolve));
    this.hello = new Promise((resolve, reject) => { this.helloSettle = { resolve, reject }; });
    this.call.on('data', (frame) => this.dispatch(frame));
    this.call.on('error', (error) => this.fail(new LinkError(`Lost the link to ${this.target}: ${grpc.status[error.code]}: ${error.details}`, error.code)));
    this.call.on('end', () => this.fail(new LinkError(`The program at ${this.target} closed the link.`, grpc.status.UNAVAILABLE)));
    // Decline write credits: every write is then answered by Completed once a reader took it.
    this.send({ hello: { protocol_version: 1, incarnation: '', program: options.program ?? `node-client[${process.pid}]`, write_credits: false } });
  }

  /**
   * Attaches an end of the named construct under a new handle.
   * @param {object} entry the NameEntry from the NameServer
   * @param {'ROLE_WRITER'|'ROLE_READER'} role
   * @returns {Promise<number>} the handle
   */
  attach(entry, role) {
    this.throwIfFailed();
    const handle = ++this.nextHandle;
    const attached = new Promise((resolve, reject) => this.attaching.set(handle, { resolve, reject }));
    this.send({ attach: { handle, name: entry.name, kind: entry.kind, value_type: entry.value_type, role } });
    return attached;
  }

  /** Writes one encoded value; resolves when the home answers OK (a reader took it, or its buffer did). */
  write(handle, bytes) {
    const { opId, done } = this.begin();
    let offset = 0;
    for (; bytes.length - offset > this.chunkSize; offset += this.chunkSize) {
      this.send({ chunk: { op_id: opId, data: bytes.subarray(offset, offset + this.chunkSize) } });
    }
    this.send({ write: { handle, op_id: opId, data: bytes.subarray(offset), credited: false } });
    return { opId, done };
  }

  /** Reads one value; resolves with its encoded bytes. */
  read(handle) {
    const { opId, done } = this.begin();
    this.send({ read: { handle, op_id: opId } });
    return { opId, done };
  }

  /** Asks the home to cancel an operation. Its Completed still comes: OK if it had already happened. */
  cancel(opId) {
    if (this.pending.has(opId)) {
      this.send({ cancel: { op_id: opId } });
    }
  }

  /** Poisons the construct the handle names (no answer comes: the frame is applied in order). */
  poison(handle) {
    this.throwIfFailed();
    this.send({ poison: { handle } });
  }

  /**
   * Ends the stream on purpose: the home first handles every frame sent, then releases this
   * client's ends as departed (not lost, which would poison a channel whose only writer we were).
   */
  async close() {
    this.closing = true;
    this.call.end();
    await this.finished;
    this.client.close();
  }

  begin() {
    this.throwIfFailed();
    const opId = String(++this.nextOp);
    const done = new Promise((resolve, reject) => this.pending.set(opId, { parts: [], resolve, reject }));
    return { opId, done };
  }

  send(frame) {
    this.call.write(frame);
  }

  dispatch(frame) {
    const body = frame[frame.body];
    switch (frame.body) {
      case 'hello':
        if (body.protocol_version !== 1) {
          this.fail(new LinkError(`The program at ${this.target} speaks Link protocol version ${body.protocol_version}, not 1.`, grpc.status.FAILED_PRECONDITION));
        } else {
          this.helloSettle.resolve(body);
        }
        break;
      case 'attached': {
        const waiting = this.attaching.get(body.handle);
        this.attaching.delete(body.handle);
        if (waiting && body.status === grpc.status.OK) {
          waiting.resolve(body.handle);
        } else if (waiting) {
          waiting.reject(new LinkError(`Cannot attach: ${grpc.status[body.status]}: ${body.message}`, body.status));
        }
        break;
      }
      case 'chunk':
        this.pending.get(body.op_id)?.parts.push(body.data);
        break;
      case 'completed':
        this.complete(body);
        break;
      default:
        // credit (never granted: this client declined them), ready and reserved (selecting
        // readers only): nothing this client asked for.
        break;
    }
  }

  complete(completed) {
    const op = this.pending.get(completed.op_id);
    if (!op) {
      return;
    }
    this.pending.delete(completed.op_id);
    switch (completed.outcome) {
      case 'OUTCOME_OK':
        op.resolve(Buffer.concat([...op.parts, completed.data]));
        break;
      case 'OUTCOME_POISONED':
        op.reject(new PoisonedError(completed.message || 'The channel is poisoned.'));
        break;
      case 'OUTCOME_CANCELLED':
        op.reject(new CancelledError(`Operation ${completed.op_id} was cancelled: nothing moved.`));
        break;
      default:
        op.reject(new LinkError(`${grpc.status[completed.status]}: ${completed.message}`, completed.status));
        break;
    }
  }

  fail(error) {
    if (this.failure) {
      return;
    }
    this.failure = this.closing ? new LinkError('The link was closed by this client.', grpc.status.CANCELLED) : error;
    this.helloSettle.reject(this.failure);
    for (const waiting of this.attaching.values()) {
      waiting.reject(this.failure);
    }
    for (const op of this.pending.values()) {
      op.reject(this.failure);
    }
    this.attaching.clear();
    this.pending.clear();
  }

  throwIfFailed() {
    if (this.failure) {
      throw this.failure;
    }
  }
}

module.exports = { LinkSession, PoisonedError, CancelledError, LinkError };

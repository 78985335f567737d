'use strict';
// Resolving a name at the NameServer (nameserver.proto). A client that only uses channels hosted
// elsewhere needs no lease: leases are for programs that host names.
const grpc = require('@grpc/grpc-js');
const { nameserver } = require('./protos');
const { channelCredentials, callMetadata } = require('./credentials');

class NameServerClient {
  /**
   * @param {string} address the NameServer's address, e.g. http://127.0.0.1:9090
   * @param {{clusterKey?: string}} options
   */
  constructor(address, options = {}) {
    let url;
    try {
      url = new URL(address);
    } catch {
      throw new RangeError(`'${address}' is not a NameServer address: give one like http://127.0.0.1:9090.`);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.port) {
      throw new RangeError(`'${address}' is not a NameServer address: give http://HOST:PORT (or https:// behind TLS).`);
    }
    this.address = address;
    this.clusterKey = options.clusterKey;
    this.client = new nameserver.NameServer(url.host, channelCredentials(url.protocol === 'https:'));
  }

  /**
   * Looks a name up, waiting up to waitMs for some program to register it. The NameServer caps
   * one call's wait (30 s by default), so a longer wait asks again.
   * @returns {Promise<object>} the NameEntry: kind, value_type, endpoint {host, port}, buffer_capacity, ...
   */
  async resolve(name, waitMs) {
    const until = Date.now() + waitMs;
    for (;;) {
      const asked = Date.now();
      const remaining = Math.max(0, until - asked);
      try {
        return await this.resolveOnce(name, remaining);
      } catch (error) {
        const unanswered = error.code === grpc.status.NOT_FOUND || error.code === grpc.status.DEADLINE_EXCEEDED;
        if (!unanswered) {
          throw error.code === grpc.status.UNAVAILABLE
            ? new Error(`Cannot reach the NameServer at ${this.address}: ${error.details}`)
            : new Error(`The NameServer ${this.address} refused to resolve '${name}': ${grpc.status[error.code]}: ${error.details}`);
        }
        if (Date.now() >= until) {
          throw new Error(`No program registered '${name}' at the NameServer ${this.address} within ${waitMs} ms: start the program that hosts it, or wait longer (--wait-ms).`);
        }
        if (Date.now() - asked < remaining / 2) {
          // A NameServer whose maximum wait is far below ours answers at once: do not spin.
          await new Promise((resume) => setTimeout(resume, Math.min(500, until - Date.now())));
        }
      }
    }
  }

  resolveOnce(name, waitMs) {
    // The deadline leaves the server time to answer DEADLINE_EXCEEDED itself after its wait.
    const deadline = new Date(Date.now() + waitMs + 5000);
    return new Promise((resolve, reject) => {
      this.client.Resolve({ name, wait_ms: waitMs }, callMetadata(this.clusterKey), { deadline }, (error, reply) => {
        if (error) {
          reject(error);
        } else {
          resolve(reply.entry);
        }
      });
    });
  }

  close() {
    this.client.close();
  }
}

module.exports = { NameServerClient };

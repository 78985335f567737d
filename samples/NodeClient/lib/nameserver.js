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
   * Looks a name up, waiting up to waitMs for some program to register it.
   * @returns {Promise<object>} the NameEntry: kind, value_type, endpoint {host, port}, buffer_capacity, ...
   */
  resolve(name, waitMs) {
    // The deadline leaves the server time to answer DEADLINE_EXCEEDED itself after its wait.
    const deadline = new Date(Date.now() + waitMs + 5000);
    return new Promise((resolve, reject) => {
      this.client.Resolve({ name, wait_ms: waitMs }, callMetadata(this.clusterKey), { deadline }, (error, reply) => {
        if (!error) {
          resolve(reply.entry);
        } else if (error.code === grpc.status.NOT_FOUND || error.code === grpc.status.DEADLINE_EXCEEDED) {
          reject(new Error(`No program registered '${name}' at the NameServer ${this.address} within ${waitMs} ms: start the program that hosts it, or wait longer (--wait-ms).`));
        } else if (error.code === grpc.status.UNAVAILABLE) {
          reject(new Error(`Cannot reach the NameServer at ${this.address}: ${error.details}`));
        } else {
          reject(new Error(`The NameServer ${this.address} refused to resolve '${name}': ${grpc.status[error.code]}: ${error.details}`));
        }
      });
    });
  }

  close() {
    this.client.close();
  }
}

module.exports = { NameServerClient };

'use strict';
// How this client reaches a CspNet program or NameServer: h2c (HTTP/2 without TLS) unless the
// address says https, and the cluster key, when the cluster has one, in every call's metadata.
const grpc = require('@grpc/grpc-js');

const clusterKeyHeader = 'x-cspnet-cluster-key';

function channelCredentials(tls) {
  return tls ? grpc.credentials.createSsl() : grpc.credentials.createInsecure();
}

function callMetadata(clusterKey) {
  const metadata = new grpc.Metadata();
  if (clusterKey) {
    metadata.set(clusterKeyHeader, clusterKey);
  }
  return metadata;
}

// host:port as gRPC targets spell it: IPv6 literals in brackets.
function target(host, port) {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

module.exports = { channelCredentials, callMetadata, target };

'use strict';
// Loads the wire protocol's contract straight from the repository's .proto files (no copies),
// so this client always speaks what src/CspNet.Remote/Protos says.
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const protoDir = path.resolve(__dirname, '..', '..', '..', 'src', 'CspNet.Remote', 'Protos');

const loaderOptions = {
  keepCase: true,   // field names as in the .proto files (op_id, value_type)
  longs: String,    // uint64 op_id and int64 ttl_ms arrive as decimal strings: exact, never rounded
  enums: String,    // 'OUTCOME_POISONED' rather than 3
  defaults: true,   // proto3 omits default values on the wire; fill them in
  oneofs: true,     // frame.body names the field that is set
};

function load(file) {
  return grpc.loadPackageDefinition(protoLoader.loadSync(path.join(protoDir, file), loaderOptions));
}

const link = load('link.proto').cspnet.link.v1;
const nameserver = load('nameserver.proto').cspnet.nameserver.v1;

module.exports = { link, nameserver, protoDir };

'use strict';
// A Node.js client of CspNet's named channels: resolve at the NameServer, then talk to the home
// over one Link stream (docs/PROTOCOL.md).
const { NameServerClient } = require('./nameserver');
const { LinkSession, PoisonedError, CancelledError, LinkError } = require('./link');
const { codecFor, wireNames, MalformedValueError } = require('./codecs');

module.exports = { NameServerClient, LinkSession, PoisonedError, CancelledError, LinkError, codecFor, wireNames, MalformedValueError };

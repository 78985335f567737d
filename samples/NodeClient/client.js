#!/usr/bin/env node
'use strict';
// Command line: write values to, read values from, or poison a CspNet named channel.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { NameServerClient, LinkSession, PoisonedError, CancelledError, codecFor, wireNames } = require('./lib');

const usage = `Usage: node client.js --nameserver http://HOST:PORT [options] COMMAND

Commands:
  write NAME VALUE...   write each VALUE in turn; each write completes when a reader took it
  read NAME COUNT       read COUNT values, printing each as one line of JSON
  poison NAME           poison the channel

Options:
  --nameserver URL      the NameServer (required), e.g. http://127.0.0.1:9090
  --type TYPE           the channel's value type (${wireNames.join(', ')});
                        default: the one the NameServer reports
  --cluster-key-file F  a file whose first line is the cluster key (default: $CSPNET_CLUSTER_KEY,
                        else this user's own key, $XDG_RUNTIME_DIR/cspnet/cluster.key or
                        ~/.cspnet/cluster.key, which a NameServer without a key uses)
  --wait-ms MS          how long to wait for the name to be registered (default 10000)

Exit codes: 0 done, 1 failed, 2 bad usage, 3 the channel is poisoned, 130 interrupted.`;

class UsageError extends Error {}

// Not node:util's parseArgs: it reads a value such as -5 as an unknown short option, so writing a
// negative int would need a `--` first. Values here are often negative numbers.
function readKey(file) {
  return fs.readFileSync(file, 'utf8').split('\n')[0].trim();
}

// The key a CspNet program of this user uses when none is configured (docs/SECURITY.md).
function userKey() {
  const runtime = process.env.XDG_RUNTIME_DIR;
  const file = process.env.CSPNET_USER_KEY_FILE
    || (runtime && fs.existsSync(runtime) ? path.join(runtime, 'cspnet', 'cluster.key') : path.join(os.homedir(), '.cspnet', 'cluster.key'));
  return fs.existsSync(file) ? readKey(file) : undefined;
}

function parse(argv) {
  const options = { waitMs: 10000, clusterKey: process.env.CSPNET_CLUSTER_KEY || undefined };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) {
        throw new UsageError(`${arg} needs a value.`);
      }
      return argv[++i];
    };
    switch (arg) {
      case '--nameserver': options.nameServer = value(); break;
      case '--type': options.type = value(); break;
      case '--cluster-key':
        // Every user of the machine can read a command line (/proc/PID/cmdline).
        throw new UsageError('--cluster-key is no longer accepted: a command line is visible to every user. Use --cluster-key-file FILE or $CSPNET_CLUSTER_KEY.');
      case '--cluster-key-file': options.clusterKey = readKey(value()); break;
      case '--wait-ms':
        options.waitMs = Number(value());
        if (!Number.isInteger(options.waitMs) || options.waitMs < 0) {
          throw new UsageError('--wait-ms takes a whole number of milliseconds.');
        }
        break;
      case '-h': case '--help': options.help = true; break;
      default:
        if (arg.startsWith('--')) {
          throw new UsageError(`Unknown option ${arg}.`);
        }
        rest.push(arg);
    }
  }
  if (options.help) {
    return options;
  }
  options.clusterKey = options.clusterKey || userKey();
  const [command, name, ...args] = rest;
  if (!options.nameServer) {
    throw new UsageError('--nameserver is required.');
  }
  if (!['write', 'read', 'poison'].includes(command) || !name) {
    throw new UsageError('Give a command (write, read or poison) and a channel name.');
  }
  if (command === 'write' && args.length === 0) {
    throw new UsageError('write needs at least one value.');
  }
  if (command === 'read' && (args.length !== 1 || !/^\d+$/.test(args[0]))) {
    throw new UsageError('read needs one COUNT, a whole number.');
  }
  if (command === 'poison' && args.length !== 0) {
    throw new UsageError('poison takes no values.');
  }
  return { ...options, command, name, args };
}

// The role to attach for poisoning: a writer where the only reader lives at the home.
function poisonRole(kind) {
  return kind === 'One2Any' ? 'ROLE_READER' : 'ROLE_WRITER';
}

async function run(options) {
  let session = null;
  let current = null;
  let interrupted = false;
  // Ctrl+C cancels the operation in flight exactly: the home answers CANCELLED (nothing moved)
  // or OK (it had already happened, and a read's value is still printed). Before the link is
  // open there is nothing to cancel.
  process.once('SIGINT', () => {
    interrupted = true;
    if (!session) {
      process.exit(130);
    }
    if (current) {
      session.cancel(current);
    }
  });

  const names = new NameServerClient(options.nameServer, { clusterKey: options.clusterKey });
  let entry;
  try {
    entry = await names.resolve(options.name, options.waitMs);
  } finally {
    names.close();
  }
  if (!['One2One', 'Any2One', 'One2Any', 'Any2Any'].includes(entry.kind)) {
    throw new UsageError(`'${options.name}' is a ${entry.kind}, not a channel.`);
  }
  const type = options.type ?? entry.value_type;
  if (type !== entry.value_type) {
    throw new UsageError(`'${options.name}' carries '${entry.value_type}' values, not '${type}': use --type ${entry.value_type}.`);
  }
  const codec = codecFor(type);
  const values = options.command === 'write' ? options.args.map((text) => codec.parse(text)) : [];

  session = await LinkSession.open(entry.endpoint, { clusterKey: options.clusterKey });
  try {
    if (options.command === 'poison') {
      const handle = await session.attach(entry, poisonRole(entry.kind));
      session.poison(handle);
      return;
    }
    const handle = await session.attach(entry, options.command === 'write' ? 'ROLE_WRITER' : 'ROLE_READER');
    const count = options.command === 'write' ? values.length : Number(options.args[0]);
    for (let i = 0; i < count && !interrupted; i++) {
      // One operation at a time: a writer's values reach the channel in the order written.
      const op = options.command === 'write' ? session.write(handle, codec.encode(values[i])) : session.read(handle);
      current = op.opId;
      const bytes = await op.done;
      current = null;
      if (options.command === 'read') {
        process.stdout.write(codec.show(codec.decode(bytes)) + '\n');
      }
    }
    if (interrupted) {
      throw new CancelledError('Interrupted.');
    }
  } finally {
    // Closing waits until the home has handled every frame sent (the poison included).
    await session.close();
  }
}

async function main() {
  let options;
  try {
    options = parse(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error.message}\n\n${usage}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(usage + '\n');
    return 0;
  }
  try {
    await run(options);
    return 0;
  } catch (error) {
    if (error instanceof PoisonedError) {
      process.stderr.write(`poisoned: ${error.message}\n`);
      return 3;
    }
    if (error instanceof CancelledError) {
      process.stderr.write(`cancelled: ${error.message}\n`);
      return 130;
    }
    process.stderr.write(`failed: ${error.message}\n`);
    return error instanceof UsageError || error instanceof RangeError ? 2 : 1;
  }
}

main().then((code) => { process.exitCode = code; });

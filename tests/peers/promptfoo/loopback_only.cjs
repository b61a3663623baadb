// Loaded with node --require: every outbound connection that is not to loopback is refused and
// written to the file LOCALJUDGE_REFUSED names, so a test can show the grading stayed on this machine.
"use strict";
const fs = require("fs");
const net = require("net");

const refusedFile = process.env.LOCALJUDGE_REFUSED;
// a name other than localhost is refused before it is looked up: "127.x.example" is not loopback
const loopback = (host) =>
  !host || host === "localhost" || host === "::1" || (net.isIPv4(host) && host.startsWith("127."));

function refuse(host, port) {
  if (refusedFile) fs.appendFileSync(refusedFile, `${host}:${port}\n`);
  return new Error(`refused: ${host}:${port} is not loopback`);
}

// net.connect, http and fetch hand the socket their arguments already normalized, as an array whose
// first item is the options; tls.connect and a direct call hand an options object, or a port and a host
function target(args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  return typeof first === "object" && first !== null ? first : { port: first, host: args[1] };
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const options = target(args);
  // a path is a local socket; http hands a null one with a host, which is a TCP connection
  if (typeof options.path !== "string" && !loopback(options.host)) {
    const error = refuse(options.host, options.port);
    process.nextTick(() => this.destroy(error));
    return this;
  }
  return connect.apply(this, args);
};

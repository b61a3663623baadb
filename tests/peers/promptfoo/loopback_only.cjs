// Loaded with node --require: every outbound connection that is not to loopback is refused and
// written to the file LOCALJUDGE_REFUSED names, so a test can show the grading stayed on this machine.
"use strict";
const fs = require("fs");
const net = require("net");

const refusedFile = process.env.LOCALJUDGE_REFUSED;
const loopback = (host) => !host || host === "localhost" || host === "::1" || /^127\./.test(host);

function refuse(host, port) {
  if (refusedFile) fs.appendFileSync(refusedFile, `${host}:${port}\n`);
  return new Error(`refused: ${host}:${port} is not loopback`);
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const options = typeof args[0] === "object" && args[0] !== null ? args[0] : { port: args[0], host: args[1] };
  if (options.path === undefined && !loopback(options.host)) {
    const error = refuse(options.host, options.port);
    process.nextTick(() => this.destroy(error));
    return this;
  }
  return connect.apply(this, args);
};

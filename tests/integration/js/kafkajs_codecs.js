// The codecs kafkajs needs for snappy, lz4 and zstd (kafkajs ships only
// gzip).  Snappy is kafkajs-snappy, the package kafkajs's documentation
// names.  The lz4 and zstd packages it names need native builds:
// kafkajs-lz4's lz4 package ships macOS binaries and rebuilds them with
// node-gyp, and @kafkajs/zstd's build fails on this Node.js.  So lz4 is
// lz4js (the LZ4 frame format in plain JavaScript, as Kafka's lz4 batches
// are) and zstd is zstd-codec (zstd compiled to JavaScript), each behind
// kafkajs's codec interface: compress(encoder) and decompress(buffer),
// both returning a Promise.
'use strict';

const SnappyCodec = require('kafkajs-snappy');
const lz4js = require('lz4js');
const { ZstdCodec } = require('zstd-codec');

let zstdReady = null;

function zstd() {
  if (!zstdReady) {
    zstdReady = new Promise((resolve) => ZstdCodec.run((z) => resolve(z)));
  }
  return zstdReady;
}

const ZSTD_LEVEL = 3;

function zstdCodec() {
  return {
    async compress(encoder) {
      const z = await zstd();
      return Buffer.from(new z.Simple().compress(encoder.buffer, ZSTD_LEVEL));
    },
    async decompress(buffer) {
      // Streaming: a frame from another producer need not carry its
      // content size, which Simple.decompress requires.
      const z = await zstd();
      const out = new z.Streaming().decompress(buffer);
      if (!out) {
        throw new Error('zstd: cannot decompress a ' + buffer.length + '-byte frame');
      }
      return Buffer.from(out);
    },
  };
}

function lz4Codec() {
  return {
    async compress(encoder) {
      return Buffer.from(lz4js.compress(encoder.buffer));
    },
    async decompress(buffer) {
      return Buffer.from(lz4js.decompress(buffer));
    },
  };
}

// register(CompressionTypes, CompressionCodecs): every codec above.
function register(types, codecs) {
  codecs[types.Snappy] = SnappyCodec;
  codecs[types.LZ4] = lz4Codec;
  codecs[types.ZSTD] = zstdCodec;
}

module.exports = { register };

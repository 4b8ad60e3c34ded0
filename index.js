'use strict';
// The package: its API (lib/api.cjs) over this platform's addon.
module.exports = require('./lib/api.cjs').create(require('./binding.js'));

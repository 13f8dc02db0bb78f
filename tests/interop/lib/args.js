// Owns command-line parsing for the interop scripts: `--name VALUE` options, boolean switches
// and --help, with errors that name the option.
'use strict'

// spec maps a flag to [key, kind]: kind is a converter (String, Number) for options that take a
// value, or true for a switch. Returns defaults overridden by what argv says.
function parseOptions(argv, usage, defaults, spec) {
  const o = { ...defaults }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--help' || a === '-h') {
      process.stdout.write(usage)
      process.exit(0)
    }
    const entry = spec[a]
    if (!entry) throw new Error(`unknown argument ${a} (see --help)`)
    const [key, kind] = entry
    if (kind === true) {
      o[key] = true
    } else {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`)
      o[key] = kind(argv[++i])
    }
  }
  return o
}

module.exports = { parseOptions }

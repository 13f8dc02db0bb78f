# SPDX-License-Identifier: Apache-2.0
"""The exceptions of scenecrdt (docs/BINDINGS.md "Errors"). The extension module raises them
with the C ABI's status (`status`, `status_name`) and the library's text as the message."""


class Error(RuntimeError):
    """A failure the scenecrdt library reported, or a closed handle used."""
    status = 0
    status_name = ""


class DecodeError(Error, ValueError):
    """A malformed DCL stream (nothing applied); `offset` is the faulty message's byte offset
    when known."""
    offset = None


class ArgumentError(Error, ValueError):
    """An argument the library refused (SC_E_INVALID_ARGUMENT: a bad URL, time or option)."""


class EncodeError(ValueError):
    """encode() refused a message: `index` is its position in the list, `line` = index + 1,
    the message is the CLI's sentence (`unknown key "postion" ...`)."""
    line = 0
    index = 0

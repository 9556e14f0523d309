"""The Schema Registry emulator's errors: Confluent's error body {"error_code", "message"} with its
HTTP status, and the codes of the API reference's "Errors" sections
(https://docs.confluent.io/platform/current/schema-registry/develop/api.html, and the per-endpoint
pages under https://docs.confluent.io/cloud/current/ccloud/).
"""

import re

# Error codes of the API's "Errors" section (error_code in every error body).
SUBJECT_NOT_FOUND = 40401
VERSION_NOT_FOUND = 40402
SCHEMA_NOT_FOUND = 40403
SUBJECT_COMPATIBILITY_NOT_CONFIGURED = 40408
INVALID_SCHEMA = 42201
INVALID_VERSION = 42202
INVALID_COMPATIBILITY = 42203


class RegistryError(Exception):
    """An answer in the API's error shape: HTTP status, error_code, message."""

    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def parse_version(text):
    """A version path segment: 1..2^31-1, or "latest" (also -1), as the API's
    GET /subjects/{subject}/versions/{version} describes; anything else is 42202."""
    if text in ("latest", "-1"):
        return None
    if re.fullmatch(r"[0-9]+", text or "") and 1 <= int(text) <= 2**31 - 1:
        return int(text)
    raise RegistryError(422, INVALID_VERSION,
                        "Invalid version '%s': a version is a number from 1 to 2^31-1, or \"latest\"" % text)

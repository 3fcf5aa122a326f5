"""Validates a JSON document against a JSON Schema, for the Surgery tests
(python3-jsonschema is not among the packages the suite installs). Knows
the keywords docs/inspect.schema.json and docs/diff.schema.json use: type,
const, enum, properties, required, additionalProperties, items, minimum and
local $ref; any other keyword is an error, so a schema cannot silently
outgrow the check.

    inspect-schema-check.py SCHEMA.json DOC.json     exit 0 valid, 1 not
"""
import json
import sys

KNOWN = {"$schema", "$id", "$defs", "title", "description", "type", "const", "enum",
         "properties", "required", "additionalProperties", "items", "minimum", "$ref"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def is_type(x, t):
    if t == "integer":
        return isinstance(x, int) and not isinstance(x, bool)
    if t == "number":
        return isinstance(x, (int, float)) and not isinstance(x, bool)
    return isinstance(x, TYPES[t])


def check(x, s, root, path, errors):
    unknown = set(s) - KNOWN
    if unknown:
        sys.exit("schema keyword(s) not supported: %s at %s" % (sorted(unknown), path))
    if "$ref" in s:
        ref = s["$ref"]
        assert ref.startswith("#/$defs/"), ref
        s = root["$defs"][ref[len("#/$defs/"):]]
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(is_type(x, t) for t in types):
            errors.append("%s: %r is not of type %s" % (path, x, types))
            return
    if "const" in s and x != s["const"]:
        errors.append("%s: %r is not %r" % (path, x, s["const"]))
    if "enum" in s and x not in s["enum"]:
        errors.append("%s: %r is not one of %s" % (path, x, s["enum"]))
    if "minimum" in s and is_type(x, "number") and x < s["minimum"]:
        errors.append("%s: %r < %r" % (path, x, s["minimum"]))
    if isinstance(x, dict):
        for k in s.get("required", []):
            if k not in x:
                errors.append("%s: missing key %r" % (path, k))
        props = s.get("properties", {})
        for k, v in x.items():
            if k in props:
                check(v, props[k], root, path + "." + k, errors)
            elif s.get("additionalProperties") is False:
                errors.append("%s: unexpected key %r" % (path, k))
            elif isinstance(s.get("additionalProperties"), dict):
                check(v, s["additionalProperties"], root, path + "." + k, errors)
    if isinstance(x, list) and "items" in s:
        for i, v in enumerate(x):
            check(v, s["items"], root, "%s[%d]" % (path, i), errors)


def main():
    schema = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]))
    errors = []
    check(doc, schema, schema, "$", errors)
    for e in errors:
        print("invalid: " + e)
    if errors:
        sys.exit(1)
    print("valid")


main()

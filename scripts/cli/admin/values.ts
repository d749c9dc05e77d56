// Values more than one das-admin group takes, checked as the command line is parsed (by the rules
// in `checks`) so that a bad one is a usage error; a value one group alone takes is checked there.
import { InvalidArgumentError } from "commander";
import { VERSION_PATTERN } from "@/lib/catalog/semver";
import { checks } from "./session";

export function datasetIdValue(text: string): string {
  if (!checks.DATASET_ID_PATTERN.test(text))
    throw new InvalidArgumentError("takes a dataset id: lower-case letters, digits, '.', '_' or '-' (at most 100).");
  return text;
}

export function versionValue(text: string): string {
  if (!VERSION_PATTERN.test(text))
    throw new InvalidArgumentError("takes a version of three dot-separated numbers, e.g. 1.2.0.");
  return text;
}

export function termsSha256(text: string): string {
  if (!checks.TERMS_SHA256_PATTERN.test(text))
    throw new InvalidArgumentError(
      "takes a terms document's SHA-256: 64 lower-case hex digits (das-admin terms list).",
    );
  return text;
}

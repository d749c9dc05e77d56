import { CodeBlock } from "./code-block";
import { Inline } from "./markdown";

const CURL = `# 1. Your key (issued by your administrator, shown once)
export DAS_API_KEY=das_YOUR_KEY
export DAS_API_URL=https://das.example.com

# 2. The datasets and versions it holds a licence for
curl -s "$DAS_API_URL/api/v1/datasets" -H "Authorization: Bearer $DAS_API_KEY"
curl -s "$DAS_API_URL/api/v1/datasets/kitchen-pick-place/versions" -H "Authorization: Bearer $DAS_API_KEY"

# 3. Failed episodes of a version, 100 per page; repeat with cursor=<next_cursor> until it is null
curl -s "$DAS_API_URL/api/v1/datasets/kitchen-pick-place/versions/1.1.0/episodes?outcome=failure&limit=100" \\
  -H "Authorization: Bearer $DAS_API_KEY"

# 4. Signed URLs (valid 15 minutes) for their front-camera files; recorded in the disclosure log
curl -s -X POST "$DAS_API_URL/api/v1/downloads" \\
  -H "Authorization: Bearer $DAS_API_KEY" -H "Content-Type: application/json" \\
  -H "Idempotency-Key: $(uuidgen)" \\
  -d '{"dataset_id":"kitchen-pick-place","version":"1.1.0","filter":{"outcome":"failure"},"streams":["cam_front"]}'`;

const CLI = `# Same two variables (or --url / --key)
npx das datasets
npx das versions kitchen-pick-place
npx das manifest kitchen-pick-place@1.1.0 --json > manifest.json
npx das episodes kitchen-pick-place@1.1.0 --outcome failure --format csv > failures.csv
npx das annotations kpp-000042 --version 1.1.0

# Pull the failed kitchen-a episodes' front-camera files, 8 transfers at a time
npx das pull kitchen-pick-place@1.1.0 --outcome failure --environment kitchen-a \\
  --streams cam_front --dir ./kpp-failures --concurrency 8`;

const NOTES = [
  "`das pull` plans requests of at most 10,000 files from the manifest, shows files, bytes, rate and ETA on stderr, writes each file to a `.das-partial` file and renames it into place only after its size and SHA-256 match the manifest.",
  "Run the same command again after an interruption: verified files are skipped, partial files are continued with an HTTP Range request, and files that changed on disk are fetched again.",
  "Expired URLs are requested again (each request is a new download, and so a new disclosure); 429 and 503 answers are waited out for `Retry-After` seconds.",
  "It exits non-zero and lists every file it could not fetch or verify; API errors are shown as `code: message (request_id)`. `--json` prints a summary for scripts.",
];

export function GettingStarted() {
  return (
    <section id="getting-started" className="scroll-mt-6 space-y-4">
      <h2 className="text-xl font-semibold text-slate-900">Getting started</h2>
      <p className="text-sm leading-6 text-slate-700">
        Every request carries your API key as a bearer token. With <code className="font-mono">curl</code>, replace{" "}
        <code className="font-mono">das_YOUR_KEY</code> with your key and the address with your service&apos;s:
      </p>
      <CodeBlock label="curl" code={CURL} />
      <h3 className="pt-2 text-base font-semibold text-slate-900">
        The <code className="font-mono">das</code> command line
      </h3>
      <p className="text-sm leading-6 text-slate-700">
        <code className="font-mono">das</code> ships with this service&apos;s package (
        <code className="font-mono">npx das --help</code>). It reads <code className="font-mono">DAS_API_URL</code> and{" "}
        <code className="font-mono">DAS_API_KEY</code>, prints tables for people and{" "}
        <code className="font-mono">--json</code> (or <code className="font-mono">--format csv|jsonl</code>) for
        scripts, and walks every page for you.
      </p>
      <CodeBlock label="das" code={CLI} />
      <ul className="list-disc space-y-1 pl-5 text-sm leading-6 text-slate-700">
        {NOTES.map((note) => (
          <li key={note}>
            <Inline text={note} />
          </li>
        ))}
      </ul>
    </section>
  );
}

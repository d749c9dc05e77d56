import type { VersionDocument } from "@/lib/catalog/version-documents";
import { DocumentMarkdown } from "../markdown/document-markdown";
import { Card, CardBody, CardHeader } from "../ui/card";

/** A version's README.md as the dataset's card, as Hugging Face shows it, rendered inert. */
export function DatasetCard({ readme, version }: { readme: VersionDocument; version: string }) {
  return (
    <div data-dataset-card>
      <Card className="mb-6 min-w-0">
        <CardHeader title="Dataset card" description={`README.md of version ${version}, as its authors wrote it.`} />
        <CardBody>
          <div className="max-h-[36rem] overflow-y-auto pr-1">
            <DocumentMarkdown text={readme.text} />
            {readme.truncated ? (
              <p className="mt-3 text-xs text-slate-500">
                The README is longer than this; the rest is in the version&apos;s files.
              </p>
            ) : null}
          </div>
        </CardBody>
      </Card>
    </div>
  );
}

import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { z } from "zod";
import { AccessRequestForm } from "@/components/datasets/access-request-form";
import { DocumentMarkdown } from "@/components/markdown/document-markdown";
import { Alert } from "@/components/ui/alert";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { PageHeader } from "@/components/ui/page-header";
import { applicableTerms } from "@/lib/catalog/access-requests";
import { portalDataset } from "@/lib/catalog/listing";
import { pageContext, pageData, pageSearch, type SearchParams } from "@/lib/http/portal";
import { requestAccessAction } from "./actions";

type Props = { params: Promise<{ id: string }>; searchParams: Promise<SearchParams> };

const Search = z.object({ version: z.string().optional() });

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Request ${(await params).id}` };
}

/** A listed dataset's request form, under the terms that apply; an unlisted dataset is not found. */
export default async function RequestAccessPage({ params, searchParams }: Props) {
  const { id } = await params;
  const ctx = await pageContext("catalog", `/datasets/${id}/request`);
  const { version } = await pageSearch(searchParams, Search);
  const dataset = await pageData(portalDataset(ctx, id));
  if (!dataset.listed) notFound();
  const terms = await pageData(applicableTerms(ctx, id));
  const open = dataset.versions.filter((v) => !v.licensed).map((v) => v.version);
  return (
    <>
      <PageHeader
        crumbs={[
          { label: "Datasets", href: "/datasets" },
          { label: dataset.title, href: `/datasets/${id}` },
          { label: "Request access" },
        ]}
        title={`Request access to ${dataset.title}`}
        description="A licence covers one version. Read the terms, say what the data is for, and accept them; an administrator decides."
      />
      {!terms ? (
        <Alert kind="warning" title="This dataset cannot be requested yet">
          No terms apply to it yet. An administrator must add them first.
        </Alert>
      ) : open.length === 0 ? (
        <Alert kind="info" title="Nothing to request">
          Your organisation holds a licence for every version of this dataset.
        </Alert>
      ) : (
        <div className="grid gap-6 lg:grid-cols-[3fr_2fr]">
          <div data-terms-document>
            <Card>
              <CardHeader
                title={terms.title}
                description={
                  <>
                    The terms you accept. SHA-256 <span className="font-mono wrap-anywhere">{terms.sha256}</span>
                  </>
                }
              />
              <CardBody>
                <div className="max-h-[36rem] overflow-y-auto pr-1">
                  <DocumentMarkdown text={terms.body} keepFrontMatter />
                </div>
              </CardBody>
            </Card>
          </div>
          <Card>
            <CardHeader title="Your request" />
            <CardBody>
              <AccessRequestForm
                datasetId={id}
                versions={open}
                defaultVersion={version}
                termsSha256={terms.sha256}
                termsTitle={terms.title}
                requestAccess={requestAccessAction}
              />
            </CardBody>
          </Card>
        </div>
      )}
    </>
  );
}

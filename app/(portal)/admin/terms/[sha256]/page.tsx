import type { Metadata } from "next";
import { Badge } from "@/components/ui/badge";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { formatBytes, formatDate } from "@/components/ui/format";
import { PageHeader } from "@/components/ui/page-header";
import { DocumentMarkdown } from "@/components/markdown/document-markdown";
import { requireTerms } from "@/lib/admin/terms";
import { pageContext, pageData } from "@/lib/http/portal";

type Props = { params: Promise<{ sha256: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Terms ${(await params).sha256.slice(0, 12)}` };
}

export default async function TermsDocumentPage({ params }: Props) {
  const { sha256 } = await params;
  const ctx = await pageContext("admin", `/admin/terms/${sha256}`);
  const terms = await pageData(requireTerms(ctx, sha256));
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Terms", href: "/admin/terms" }, { label: terms.title }]}
        title={terms.title}
        description={
          <>
            {terms.dataset_id ? (
              <>
                For dataset <span className="font-mono">{terms.dataset_id}</span>
              </>
            ) : (
              <Badge>every dataset</Badge>
            )}{" "}
            · added {formatDate(terms.created_at)} by {terms.created_by} · {formatBytes(terms.bytes)}
          </>
        }
      />
      <p className="mb-4 text-xs text-slate-500">
        SHA-256 <span className="font-mono wrap-anywhere text-slate-700">{terms.sha256}</span>
      </p>
      <div data-terms-document>
        <Card>
          <CardHeader title="Text" description="As added, rendered as Markdown without any HTML; it never changes." />
          <CardBody>
            <DocumentMarkdown text={terms.body} keepFrontMatter />
          </CardBody>
        </Card>
      </div>
    </>
  );
}

// `ref add|get|list|delete|search`: reference material kept beside
// conversations (ctxkit::ReferenceStore), with BM25 search. Every command
// prints the library's document for its result (references.h, "JSON
// documents": the bytes the C ABI returns and track_references wraps) on
// one line.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "ctxkit/references.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/record_flags.h"
#include "programs/ctxkit/cli/store_location.h"
#include "programs/ctxkit/tools/record_json.h"

namespace ctxkit::program {

// Not a choices flag: a wrong type is the library's INVALID_ARGUMENT naming
// "type", like every other bad field value.
const Flag kRefTypeFlag{"--type", "TYPE", "file, url, code, note or document"};
const Flag kRefTitleFlag{"--title", "TEXT", "the reference's title"};
const Flag kRefConversationFlag{"--conversation", "ID",
                                "the conversation it belongs to"};
const Flag kRefMetadataFlag{"--metadata", "JSON",
                            "a JSON object stored with it (default {})"};
const Flag kRefWithContentFlag{"--content", "",
                               "include each reference's content and "
                               "metadata"};
const Flag kSearchLimitFlag{.name = "--limit",
                            .value_name = "N",
                            .help = "at most N results, 1..100 (default 10)",
                            .is_number = true,
                            .library_range = true};

namespace {

struct OpenedReferences {
  std::unique_ptr<Store> store;
  std::unique_ptr<ReferenceStore> references;
};

StatusOr<OpenedReferences> OpenReferences(const Args& args,
                                          StoreCreation creation) {
  auto location = ResolveStoreLocation(args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForWriting(*location, creation);
  if (!store.ok()) return store.status();
  OpenedReferences opened;
  opened.store = *std::move(store);
  auto references = ReferenceStore::Open(*opened.store);
  if (!references.ok()) return references.status();
  opened.references = *std::move(references);
  return opened;
}

}  // namespace

Status RunRefAdd(const Args& args, std::ostream& out) {
  NewReference reference;
  if (const std::string* type = args.Value(kRefTypeFlag.name)) {
    reference.type = *type;
  }
  if (const std::string* title = args.Value(kRefTitleFlag.name)) {
    reference.title = *title;
  }
  if (const std::string* id = args.Value(kRefConversationFlag.name)) {
    reference.conversation_id = *id;
  }
  if (const std::string* metadata = args.Value(kRefMetadataFlag.name)) {
    reference.metadata = *metadata;
  }
  auto content =
      ReadContent(args, 0, "content", ReferenceLimits::kMaxContentBytes);
  if (!content.ok()) return content.status();
  reference.content = **std::move(content);
  auto opened = OpenReferences(args, StoreCreation::kIfMissing);
  if (!opened.ok()) return opened.status();
  auto added = opened->references->Add(reference);
  if (!added.ok()) return added.status();
  // Without the content: it was just given, echoing it back is noise.
  return PrintDocument(ReferenceToJson(*added, false), out);
}

Status RunRefGet(const Args& args, std::ostream& out) {
  auto opened = OpenReferences(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto reference = opened->references->Get(args.positional()[0]);
  if (!reference.ok()) return reference.status();
  return PrintDocument(ReferenceToJson(*reference, true), out);
}

Status RunRefList(const Args& args, std::ostream& out) {
  ListReferencesOptions options;
  if (const std::string* id = args.Value(kRefConversationFlag.name)) {
    options.conversation_id = *id;
  }
  options.include_content = args.Has(kRefWithContentFlag.name);
  auto opened = OpenReferences(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto list = opened->references->List(options);
  if (!list.ok()) return list.status();
  return PrintDocument(ReferenceListToJson(*list, options.include_content),
                       out);
}

Status RunRefDelete(const Args& args, std::ostream& out) {
  auto opened = OpenReferences(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  const std::string& id = args.positional()[0];
  if (Status deleted = opened->references->Delete(id); !deleted.ok()) {
    return deleted;
  }
  out << DeletedReferenceJson(id) << "\n";
  return Status::Ok();
}

Status RunRefSearch(const Args& args, std::ostream& out) {
  SearchReferencesOptions options;
  options.query = args.positional()[0];
  auto limit = Uint32NumberFlag(args, kSearchLimitFlag, "limit", 1,
                                ReferenceLimits::kMaxSearchLimit);
  if (!limit.ok()) return limit.status();
  if (limit->has_value()) options.limit = **limit;
  if (const std::string* id = args.Value(kRefConversationFlag.name)) {
    options.conversation_id = *id;
  }
  auto opened = OpenReferences(args, StoreCreation::kNever);
  if (!opened.ok()) return opened.status();
  auto results = opened->references->Search(options);
  if (!results.ok()) return results.status();
  return PrintDocument(ReferenceSearchResultsToJson(*results), out);
}

}  // namespace ctxkit::program

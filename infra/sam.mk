# AWS SAM build targets, included by the Makefile.
#
# `sam build` builds every function of template.yaml with BuildMethod
# makefile: it runs `make build-<LogicalId>` with ARTIFACTS_DIR set, and the
# target leaves the function's `bootstrap` executable (provided.al2023, arm64)
# there. `make build` cross-compiles the same binaries into bin/<dir>/bootstrap;
# `make template-check` lints template.yaml and runs `sam build` (no Docker
# needed) in a pinned Python virtual environment, which also holds
# schemathesis for infra/fuzz.sh (one pip resolve for all three keeps their
# shared dependencies consistent), then scans template.yaml with checkov.
# checkov pins boto3 to a release aws-sam-cli refuses, so it has a pinned
# environment of its own. Both live in TOOLS_CACHE (default
# ~/.cache/adminapi-tools), named by their pinned versions, so that a fresh
# clone reuses them rather than spend minutes installing them again; a
# version change makes new ones.

GO ?= go
CACHE ?= $(CURDIR)/.cache

# Functions: template.yaml logical id = directory under functions/. A new
# resource group needs one line here (and its function in template.yaml);
# shared/api/template_test.go checks both against api.Groups and its list of
# functions that serve no route (webhook-dispatch, change-feed).
SAM_FUNCTIONS := \
	RedirectsFunction=functions/redirects \
	ScriptTagsFunction=functions/script-tags \
	EventsFunction=functions/events \
	PagesFunction=functions/pages \
	BlogsFunction=functions/blogs \
	WebhooksFunction=functions/webhooks \
	CollectionsFunction=functions/collections \
	VariantsFunction=functions/variants \
	FulfillmentServicesFunction=functions/fulfillment-services \
	BillingFunction=functions/billing \
	TransactionsFunction=functions/transactions \
	ThemesFunction=functions/themes \
	ThemeImportFunction=functions/theme-import \
	CountriesFunction=functions/countries \
	MetafieldsFunction=functions/metafields \
	CustomersFunction=functions/customers \
	WebhookDispatchFunction=functions/webhook-dispatch \
	ChangeFeedFunction=functions/change-feed \
	ProviderJobsFunction=functions/provider-jobs \
	FetchStockFunction=functions/fetch-stock \
	FetchTrackingNumbersFunction=functions/fetch-tracking-numbers \
	ShopifyPathsFunction=functions/shopify-paths \
	OauthFunction=functions/oauth \
	GraphqlFunction=functions/graphql

SAM_CLI_VERSION := 1.170.0
CFN_LINT_VERSION := 1.58.0
SCHEMATHESIS_VERSION := 4.32.5
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/adminapi-tools
VENV := $(TOOLS_CACHE)/venv-sam-$(SAM_CLI_VERSION)-cfn-lint-$(CFN_LINT_VERSION)-schemathesis-$(SCHEMATHESIS_VERSION)
VENV_STAMP := $(VENV)/.complete
SAM_BUILD_DIR := $(CACHE)/sam-build
CHECKOV_VERSION := 3.3.30
CHECKOV_VENV := $(TOOLS_CACHE)/venv-checkov-$(CHECKOV_VERSION)
CHECKOV_STAMP := $(CHECKOV_VENV)/.complete
# Shopify's official Python client, which infra/shopify_client drives
# against the local runner (infra/localrunner's TestShopifyPythonClient),
# with its dependencies pinned, in an environment of its own.
SHOPIFY_CLIENT_PACKAGES := ShopifyAPI==12.7.0 pyactiveresource==2.2.2 six==1.17.0 PyJWT==2.15.1 PyYAML==6.0.4
SHOPIFY_CLIENT_VENV := $(TOOLS_CACHE)/venv-shopifyapi-12.7.0-pyactiveresource-2.2.2
SHOPIFY_CLIENT_STAMP := $(SHOPIFY_CLIENT_VENV)/.complete
# golangci-lint, which make vet runs (.golangci.yml says what it checks),
# built once from the Go module proxy at its pinned version.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(TOOLS_CACHE)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint
# Shopify's official Node library (@shopify/shopify-api), pinned with its
# dependencies by infra/shopify_node/package-lock.json: infra/localrunner's
# TestShopifyNodeClient drives every REST class with it
# (test_shopify_node_client.mjs) and TestShopifyNodeAuth installs an app
# with it (app.cjs: auth.begin and auth.callback in a browser).
SHOPIFY_NODE_DIR := infra/shopify_node
SHOPIFY_NODE := $(TOOLS_CACHE)/node-shopify-api-15.0.0
SHOPIFY_APP_EXPRESS_DIR := infra/shopify_app_express
SHOPIFY_APP_EXPRESS := $(TOOLS_CACHE)/node-shopify-app-express-8.0.2

# Static arm64 Linux binary, no RPC shim (provided.al2023 talks to the
# runtime API directly), no paths or symbol tables.
LAMBDA_GO_BUILD = CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags "-s -w"

sam_function_id = $(word 1,$(subst =, ,$(1)))
sam_function_dir = $(word 2,$(subst =, ,$(1)))
SAM_FUNCTION_DIRS := $(foreach f,$(SAM_FUNCTIONS),$(call sam_function_dir,$(f)))

.PHONY: venv schemathesis-venv checkov-venv shopify-client-venv shopify-client-python shopify-node shopify-node-path shopify-app-express shopify-app-express-path shopify-schema shopify-schema-path shopify-api-node shopify-api-node-path venv-path template-check build sam-force

# build-<LogicalId>: run by `sam build` with ARTIFACTS_DIR set. With
# LAMBDA_PREBUILT set (template-check sets it), the function's binary is
# copied from there: one go build made them all, each package compiled
# once, rather than 22 builds side by side compiling the same SDK.
define sam_build_target
.PHONY: build-$(1)
build-$(1):
	@test -n "$$(ARTIFACTS_DIR)" || { echo "build-$(1): ARTIFACTS_DIR is not set (run by sam build)" >&2; exit 1; }
	if [ -n "$$(LAMBDA_PREBUILT)" ]; then cp "$$(LAMBDA_PREBUILT)/$(notdir $(2))" "$$(ARTIFACTS_DIR)/bootstrap"; \
	else $$(LAMBDA_GO_BUILD) -o "$$(ARTIFACTS_DIR)/bootstrap" ./$(2); fi
endef
$(foreach f,$(SAM_FUNCTIONS),$(eval $(call sam_build_target,$(call sam_function_id,$(f)),$(call sam_function_dir,$(f)))))

build: $(patsubst functions/%,bin/%/bootstrap,$(SAM_FUNCTION_DIRS)) ## cross-compile every function into bin/<dir>/bootstrap

# go decides what is up to date, so always ask it.
bin/%/bootstrap: sam-force
	$(LAMBDA_GO_BUILD) -o $@ ./functions/$*

sam-force:

venv: $(VENV_STAMP) ## Python tools of template-check and fuzz (aws-sam-cli, cfn-lint, schemathesis), pinned

schemathesis-venv: $(VENV_STAMP)

venv-path: ## print where the venv of make venv is (infra/fuzz.sh runs schemathesis from it)
	@echo $(VENV)

# make_venv DIR PACKAGES: a venv in DIR with PACKAGES, built once under a
# lock (clones running make test side by side share it) and marked complete
# only when pip succeeded, so a broken one is rebuilt.
define make_venv
	mkdir -p $(TOOLS_CACHE)
	flock $(1).lock sh -c 'test -f $(1)/.complete && exit 0; rm -rf $(1) && python3 -m venv $(1) && \
		$(1)/bin/pip install --quiet --disable-pip-version-check $(2) && touch $(1)/.complete'
endef

$(VENV_STAMP):
	$(call make_venv,$(VENV),aws-sam-cli==$(SAM_CLI_VERSION) cfn-lint==$(CFN_LINT_VERSION) schemathesis==$(SCHEMATHESIS_VERSION))

shopify-client-venv: $(SHOPIFY_CLIENT_STAMP) ## Shopify's Python client, pinned, in its own environment

shopify-client-python: ## print the python of make shopify-client-venv (make test sets SHOPIFY_CLIENT_PYTHON to it)
	@echo $(SHOPIFY_CLIENT_VENV)/bin/python

$(SHOPIFY_CLIENT_STAMP):
	$(call make_venv,$(SHOPIFY_CLIENT_VENV),$(SHOPIFY_CLIENT_PACKAGES))

$(GOLANGCI_LINT):
	mkdir -p $(dir $@)
	flock $(dir $@).lock sh -c 'test -x $@ || GOBIN=$(dir $@) GOFLAGS= $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)'

# npm ci once under a lock; the stamp holds the lock file's checksum, so a
# new pin installs afresh and a broken install is redone.
shopify-node: ## Shopify's Node library (@shopify/shopify-api, pinned), installed into the tools cache
	mkdir -p $(TOOLS_CACHE)
	flock $(SHOPIFY_NODE).lock sh -c 'sum=$$(sha256sum < $(SHOPIFY_NODE_DIR)/package-lock.json); \
		test "$$(cat $(SHOPIFY_NODE)/.complete 2>/dev/null)" = "$$sum" && exit 0; \
		rm -rf $(SHOPIFY_NODE) && mkdir -p $(SHOPIFY_NODE) && \
		cp $(SHOPIFY_NODE_DIR)/package.json $(SHOPIFY_NODE_DIR)/package-lock.json $(SHOPIFY_NODE)/ && \
		npm ci --prefix $(SHOPIFY_NODE) --ignore-scripts --no-audit --no-fund --loglevel=error && \
		echo "$$sum" > $(SHOPIFY_NODE)/.complete'

shopify-node-path: ## print where make shopify-node installs (make test sets SHOPIFY_NODE to it)
	@echo $(SHOPIFY_NODE)

# shopify-api-node (the community client the issue names), pinned in
# infra/shopify_api_node, installed apart from Shopify's library so that
# neither install replaces the other.
SHOPIFY_API_NODE_DIR := infra/shopify_api_node
SHOPIFY_API_NODE := $(TOOLS_CACHE)/node-shopify-api-node-3.15.0

shopify-api-node: ## shopify-api-node (pinned), installed into the tools cache
	mkdir -p $(TOOLS_CACHE)
	flock $(SHOPIFY_API_NODE).lock sh -c 'sum=$$(sha256sum < $(SHOPIFY_API_NODE_DIR)/package-lock.json); \
		test "$$(cat $(SHOPIFY_API_NODE)/.complete 2>/dev/null)" = "$$sum" && exit 0; \
		rm -rf $(SHOPIFY_API_NODE) && mkdir -p $(SHOPIFY_API_NODE) && \
		cp $(SHOPIFY_API_NODE_DIR)/package.json $(SHOPIFY_API_NODE_DIR)/package-lock.json $(SHOPIFY_API_NODE)/ && \
		npm ci --prefix $(SHOPIFY_API_NODE) --ignore-scripts --no-audit --no-fund --loglevel=error && \
		echo "$$sum" > $(SHOPIFY_API_NODE)/.complete'

shopify-api-node-path: ## print where make shopify-api-node installs (make test sets SHOPIFY_API_NODE to it)
	@echo $(SHOPIFY_API_NODE)

shopify-app-express: ## Shopify's Express app package (@shopify/shopify-app-express, pinned) and Express, installed into the tools cache
	mkdir -p $(TOOLS_CACHE)
	flock $(SHOPIFY_APP_EXPRESS).lock sh -c 'sum=$$(sha256sum < $(SHOPIFY_APP_EXPRESS_DIR)/package-lock.json); \
		test "$$(cat $(SHOPIFY_APP_EXPRESS)/.complete 2>/dev/null)" = "$$sum" && exit 0; \
		rm -rf $(SHOPIFY_APP_EXPRESS) && mkdir -p $(SHOPIFY_APP_EXPRESS) && \
		cp $(SHOPIFY_APP_EXPRESS_DIR)/package.json $(SHOPIFY_APP_EXPRESS_DIR)/package-lock.json $(SHOPIFY_APP_EXPRESS)/ && \
		npm ci --prefix $(SHOPIFY_APP_EXPRESS) --ignore-scripts --no-audit --no-fund --loglevel=error && \
		echo "$$sum" > $(SHOPIFY_APP_EXPRESS)/.complete'

shopify-app-express-path: ## print where make shopify-app-express installs (make test sets SHOPIFY_APP_EXPRESS to it)
	@echo $(SHOPIFY_APP_EXPRESS)

# Shopify's Admin GraphQL schema as @shopify/dev-mcp ships its introspection
# (ISC): shared/admingraphql's TestSchemaMatchesShopify compares the
# service's schema with it. Only the data file is kept.
SHOPIFY_SCHEMA := $(TOOLS_CACHE)/shopify-dev-mcp-1.16.0
SHOPIFY_SCHEMA_FILE := package/dist/data/admin_2026-07.json.gz

shopify-schema: ## Shopify's Admin GraphQL introspection (2026-07, from @shopify/dev-mcp 1.16.0), into the tools cache
	mkdir -p $(TOOLS_CACHE)
	flock $(SHOPIFY_SCHEMA).lock sh -c 'test -f $(SHOPIFY_SCHEMA)/.complete && exit 0; \
		rm -rf $(SHOPIFY_SCHEMA) && mkdir -p $(SHOPIFY_SCHEMA) && cd $(SHOPIFY_SCHEMA) && \
		npm pack @shopify/dev-mcp@1.16.0 --silent --loglevel=error >/dev/null && \
		tar xzf shopify-dev-mcp-1.16.0.tgz $(SHOPIFY_SCHEMA_FILE) && rm shopify-dev-mcp-1.16.0.tgz && touch .complete'

shopify-schema-path: ## print the introspection file make shopify-schema fetches (make test sets SHOPIFY_ADMIN_SCHEMA to it)
	@echo $(SHOPIFY_SCHEMA)/$(SHOPIFY_SCHEMA_FILE)

checkov-venv: $(CHECKOV_STAMP) ## checkov, pinned, in its own environment

$(CHECKOV_STAMP):
	$(call make_venv,$(CHECKOV_VENV),checkov==$(CHECKOV_VERSION))

# --build-in-source: make runs in the repository instead of a scratch copy of
# it (CodeUri is the repository root, .cache included).
# checkov: every check of the template passes or is skipped in the
# resource's Metadata with its reason (checkov:skip=<id>:<reason>);
# --skip-download keeps it to the checks it ships with (no network).
# cfn-lint and checkov (one Python process each) run beside the build.
template-check: $(VENV_STAMP) $(CHECKOV_STAMP) ## lint template.yaml, sam build it, scan it with checkov
	rm -rf $(CACHE)/lambda-arm64 && mkdir -p $(CACHE)/lambda-arm64
	$(VENV)/bin/cfn-lint template.yaml & lint=$$!; \
	$(CHECKOV_VENV)/bin/checkov --quiet --compact --skip-download --framework cloudformation --file template.yaml & scan=$$!; \
	built=0; $(LAMBDA_GO_BUILD) -o $(CACHE)/lambda-arm64/ $(addprefix ./,$(SAM_FUNCTION_DIRS)) && \
	LAMBDA_PREBUILT=$(CACHE)/lambda-arm64 SAM_CLI_TELEMETRY=0 $(VENV)/bin/sam build --template-file template.yaml --build-dir $(SAM_BUILD_DIR) --build-in-source --no-cached --parallel || built=1; \
	wait $$lint; linted=$$?; wait $$scan; scanned=$$?; \
	test $$built = 0 -a $$linted = 0 -a $$scanned = 0

--
-- PostgreSQL database dump
--

\restrict F5X1IBczdkv90hhz3OxG5nw9XdN5MduZATMSjuCA1YZpcLTxyhWIZyniei0hjF2

-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: fixture_v1; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA fixture_v1;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: data_ragloom_indexes; Type: TABLE; Schema: fixture_v1; Owner: -
--

CREATE TABLE fixture_v1.data_ragloom_indexes (
    id integer NOT NULL,
    key character varying NOT NULL,
    namespace character varying NOT NULL,
    value json
);


--
-- Name: data_ragloom_indexes_id_seq; Type: SEQUENCE; Schema: fixture_v1; Owner: -
--

CREATE SEQUENCE fixture_v1.data_ragloom_indexes_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: data_ragloom_indexes_id_seq; Type: SEQUENCE OWNED BY; Schema: fixture_v1; Owner: -
--

ALTER SEQUENCE fixture_v1.data_ragloom_indexes_id_seq OWNED BY fixture_v1.data_ragloom_indexes.id;


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f; Type: TABLE; Schema: fixture_v1; Owner: -
--

CREATE TABLE fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f (
    id bigint NOT NULL,
    text character varying NOT NULL,
    metadata_ jsonb,
    node_id character varying,
    embedding public.vector(1),
    text_search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, (text)::text)) STORED
);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_docstore; Type: TABLE; Schema: fixture_v1; Owner: -
--

CREATE TABLE fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore (
    id integer NOT NULL,
    key character varying NOT NULL,
    namespace character varying NOT NULL,
    value json
);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_docstore_id_seq; Type: SEQUENCE; Schema: fixture_v1; Owner: -
--

CREATE SEQUENCE fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_docstore_id_seq; Type: SEQUENCE OWNED BY; Schema: fixture_v1; Owner: -
--

ALTER SEQUENCE fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore_id_seq OWNED BY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore.id;


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_id_seq; Type: SEQUENCE; Schema: fixture_v1; Owner: -
--

CREATE SEQUENCE fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_id_seq; Type: SEQUENCE OWNED BY; Schema: fixture_v1; Owner: -
--

ALTER SEQUENCE fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_id_seq OWNED BY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f.id;


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_indexstore; Type: TABLE; Schema: fixture_v1; Owner: -
--

CREATE TABLE fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore (
    id integer NOT NULL,
    key character varying NOT NULL,
    namespace character varying NOT NULL,
    value json
);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_indexstore_id_seq; Type: SEQUENCE; Schema: fixture_v1; Owner: -
--

CREATE SEQUENCE fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_indexstore_id_seq; Type: SEQUENCE OWNED BY; Schema: fixture_v1; Owner: -
--

ALTER SEQUENCE fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore_id_seq OWNED BY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore.id;


--
-- Name: data_ragloom_indexes id; Type: DEFAULT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_ragloom_indexes ALTER COLUMN id SET DEFAULT nextval('fixture_v1.data_ragloom_indexes_id_seq'::regclass);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f id; Type: DEFAULT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f ALTER COLUMN id SET DEFAULT nextval('fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_id_seq'::regclass);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_docstore id; Type: DEFAULT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore ALTER COLUMN id SET DEFAULT nextval('fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore_id_seq'::regclass);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_indexstore id; Type: DEFAULT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore ALTER COLUMN id SET DEFAULT nextval('fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore_id_seq'::regclass);


--
-- Data for Name: data_ragloom_indexes; Type: TABLE DATA; Schema: fixture_v1; Owner: -
--

COPY fixture_v1.data_ragloom_indexes (id, key, namespace, value) FROM stdin;
1	/tmp/ragloom-durable-fixture-servers/docs	ragloom/indexes	{"name": "rl_c02a6e91d7bb_57f659773e3f", "embed_dim": 1}
\.


--
-- Data for Name: data_rl_c02a6e91d7bb_57f659773e3f; Type: TABLE DATA; Schema: fixture_v1; Owner: -
--

COPY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f (id, text, metadata_, node_id, embedding) FROM stdin;
1	# Boat\n\nThe boat was repainted in July by the harbour mechanic.\nIts engine ran again the next morning.	{"doc_id": "/tmp/ragloom-durable-fixture-servers/docs/boat.md", "file_name": "boat.md", "file_path": "/tmp/ragloom-durable-fixture-servers/docs/boat.md", "file_size": 103, "file_type": "text/markdown", "_node_type": "TextNode", "ref_doc_id": "/tmp/ragloom-durable-fixture-servers/docs/boat.md", "document_id": "/tmp/ragloom-durable-fixture-servers/docs/boat.md", "_node_content": "{\\"id_\\": \\"01a24e8e-7da0-71dc-9890-3236dd603c3e\\", \\"embedding\\": null, \\"metadata\\": {\\"file_path\\": \\"/tmp/ragloom-durable-fixture-servers/docs/boat.md\\", \\"file_name\\": \\"boat.md\\", \\"file_type\\": \\"text/markdown\\", \\"file_size\\": 103, \\"creation_date\\": \\"2026-12-07\\", \\"last_modified_date\\": \\"2026-01-01\\"}, \\"excluded_embed_metadata_keys\\": [\\"file_name\\", \\"file_type\\", \\"file_size\\", \\"creation_date\\", \\"last_modified_date\\", \\"last_accessed_date\\"], \\"excluded_llm_metadata_keys\\": [\\"file_name\\", \\"file_type\\", \\"file_size\\", \\"creation_date\\", \\"last_modified_date\\", \\"last_accessed_date\\"], \\"relationships\\": {\\"1\\": {\\"node_id\\": \\"/tmp/ragloom-durable-fixture-servers/docs/boat.md\\", \\"node_type\\": \\"4\\", \\"metadata\\": {\\"file_path\\": \\"/tmp/ragloom-durable-fixture-servers/docs/boat.md\\", \\"file_name\\": \\"boat.md\\", \\"file_type\\": \\"text/markdown\\", \\"file_size\\": 103, \\"creation_date\\": \\"2026-12-07\\", \\"last_modified_date\\": \\"2026-01-01\\"}, \\"hash\\": \\"4f1efd7dfa03c5075c2c91a114b25e97d0fe67a9cc4bb6fef37d5814ef2db9b3\\", \\"class_name\\": \\"RelatedNodeInfo\\"}}, \\"metadata_template\\": \\"{key}: {value}\\", \\"metadata_separator\\": \\"\\\\n\\", \\"text\\": \\"\\", \\"mimetype\\": \\"text/plain\\", \\"start_char_idx\\": 0, \\"end_char_idx\\": 102, \\"text_template\\": \\"{metadata_str}\\\\n\\\\n{content}\\", \\"class_name\\": \\"TextNode\\"}", "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}	01a24e8e-7da0-71dc-9890-3236dd603c3e	\N
2	The heron stands in the shallows of the north bed, waiting for fish.\n\nAt dusk it flies back to the tall pines.	{"doc_id": "/tmp/ragloom-durable-fixture-servers/docs/heron.txt", "file_name": "heron.txt", "file_path": "/tmp/ragloom-durable-fixture-servers/docs/heron.txt", "file_size": 111, "file_type": "text/plain", "_node_type": "TextNode", "ref_doc_id": "/tmp/ragloom-durable-fixture-servers/docs/heron.txt", "document_id": "/tmp/ragloom-durable-fixture-servers/docs/heron.txt", "_node_content": "{\\"id_\\": \\"01a24e8e-7da0-71dc-9890-323514a56767\\", \\"embedding\\": null, \\"metadata\\": {\\"file_path\\": \\"/tmp/ragloom-durable-fixture-servers/docs/heron.txt\\", \\"file_name\\": \\"heron.txt\\", \\"file_type\\": \\"text/plain\\", \\"file_size\\": 111, \\"creation_date\\": \\"2026-12-07\\", \\"last_modified_date\\": \\"2026-01-01\\"}, \\"excluded_embed_metadata_keys\\": [\\"file_name\\", \\"file_type\\", \\"file_size\\", \\"creation_date\\", \\"last_modified_date\\", \\"last_accessed_date\\"], \\"excluded_llm_metadata_keys\\": [\\"file_name\\", \\"file_type\\", \\"file_size\\", \\"creation_date\\", \\"last_modified_date\\", \\"last_accessed_date\\"], \\"relationships\\": {\\"1\\": {\\"node_id\\": \\"/tmp/ragloom-durable-fixture-servers/docs/heron.txt\\", \\"node_type\\": \\"4\\", \\"metadata\\": {\\"file_path\\": \\"/tmp/ragloom-durable-fixture-servers/docs/heron.txt\\", \\"file_name\\": \\"heron.txt\\", \\"file_type\\": \\"text/plain\\", \\"file_size\\": 111, \\"creation_date\\": \\"2026-12-07\\", \\"last_modified_date\\": \\"2026-01-01\\"}, \\"hash\\": \\"3745bc810f3afde17668dd7a273304cabea2c30474266e925db76592ba51f4ee\\", \\"class_name\\": \\"RelatedNodeInfo\\"}}, \\"metadata_template\\": \\"{key}: {value}\\", \\"metadata_separator\\": \\"\\\\n\\", \\"text\\": \\"\\", \\"mimetype\\": \\"text/plain\\", \\"start_char_idx\\": 0, \\"end_char_idx\\": 110, \\"text_template\\": \\"{metadata_str}\\\\n\\\\n{content}\\", \\"class_name\\": \\"TextNode\\"}", "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}	01a24e8e-7da0-71dc-9890-323514a56767	\N
3	Trellis notes: the roses climb the south fence; prune them in March.	{"doc_id": "/tmp/ragloom-durable-fixture-servers/docs/trellis.txt", "file_name": "trellis.txt", "file_path": "/tmp/ragloom-durable-fixture-servers/docs/trellis.txt", "file_size": 69, "file_type": "text/plain", "_node_type": "TextNode", "ref_doc_id": "/tmp/ragloom-durable-fixture-servers/docs/trellis.txt", "document_id": "/tmp/ragloom-durable-fixture-servers/docs/trellis.txt", "_node_content": "{\\"id_\\": \\"01a24e8e-7da1-77be-8756-d93303f9defa\\", \\"embedding\\": null, \\"metadata\\": {\\"file_path\\": \\"/tmp/ragloom-durable-fixture-servers/docs/trellis.txt\\", \\"file_name\\": \\"trellis.txt\\", \\"file_type\\": \\"text/plain\\", \\"file_size\\": 69, \\"creation_date\\": \\"2026-12-07\\", \\"last_modified_date\\": \\"2026-01-01\\"}, \\"excluded_embed_metadata_keys\\": [\\"file_name\\", \\"file_type\\", \\"file_size\\", \\"creation_date\\", \\"last_modified_date\\", \\"last_accessed_date\\"], \\"excluded_llm_metadata_keys\\": [\\"file_name\\", \\"file_type\\", \\"file_size\\", \\"creation_date\\", \\"last_modified_date\\", \\"last_accessed_date\\"], \\"relationships\\": {\\"1\\": {\\"node_id\\": \\"/tmp/ragloom-durable-fixture-servers/docs/trellis.txt\\", \\"node_type\\": \\"4\\", \\"metadata\\": {\\"file_path\\": \\"/tmp/ragloom-durable-fixture-servers/docs/trellis.txt\\", \\"file_name\\": \\"trellis.txt\\", \\"file_type\\": \\"text/plain\\", \\"file_size\\": 69, \\"creation_date\\": \\"2026-12-07\\", \\"last_modified_date\\": \\"2026-01-01\\"}, \\"hash\\": \\"8b0f507aca8e32a1834f0bf041fdc19dd6c699cba519cf451be21610f3fef9a4\\", \\"class_name\\": \\"RelatedNodeInfo\\"}}, \\"metadata_template\\": \\"{key}: {value}\\", \\"metadata_separator\\": \\"\\\\n\\", \\"text\\": \\"\\", \\"mimetype\\": \\"text/plain\\", \\"start_char_idx\\": 0, \\"end_char_idx\\": 68, \\"text_template\\": \\"{metadata_str}\\\\n\\\\n{content}\\", \\"class_name\\": \\"TextNode\\"}", "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}	01a24e8e-7da1-77be-8756-d93303f9defa	\N
\.


--
-- Data for Name: data_rl_c02a6e91d7bb_57f659773e3f_docstore; Type: TABLE DATA; Schema: fixture_v1; Owner: -
--

COPY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore (id, key, namespace, value) FROM stdin;
1	01a24e8e-7da0-71dc-9890-3236dd603c3e	docstore/data	{"__data__": {"id_": "01a24e8e-7da0-71dc-9890-3236dd603c3e", "embedding": null, "metadata": {"file_path": "/tmp/ragloom-durable-fixture-servers/docs/boat.md", "file_name": "boat.md", "file_type": "text/markdown", "file_size": 103, "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}, "excluded_embed_metadata_keys": ["file_name", "file_type", "file_size", "creation_date", "last_modified_date", "last_accessed_date"], "excluded_llm_metadata_keys": ["file_name", "file_type", "file_size", "creation_date", "last_modified_date", "last_accessed_date"], "relationships": {"1": {"node_id": "/tmp/ragloom-durable-fixture-servers/docs/boat.md", "node_type": "4", "metadata": {"file_path": "/tmp/ragloom-durable-fixture-servers/docs/boat.md", "file_name": "boat.md", "file_type": "text/markdown", "file_size": 103, "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}, "hash": "4f1efd7dfa03c5075c2c91a114b25e97d0fe67a9cc4bb6fef37d5814ef2db9b3", "class_name": "RelatedNodeInfo"}}, "metadata_template": "{key}: {value}", "metadata_separator": "\\n", "text": "# Boat\\n\\nThe boat was repainted in July by the harbour mechanic.\\nIts engine ran again the next morning.", "mimetype": "text/plain", "start_char_idx": 0, "end_char_idx": 102, "text_template": "{metadata_str}\\n\\n{content}", "class_name": "TextNode"}, "__type__": "1"}
2	01a24e8e-7da0-71dc-9890-323514a56767	docstore/data	{"__data__": {"id_": "01a24e8e-7da0-71dc-9890-323514a56767", "embedding": null, "metadata": {"file_path": "/tmp/ragloom-durable-fixture-servers/docs/heron.txt", "file_name": "heron.txt", "file_type": "text/plain", "file_size": 111, "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}, "excluded_embed_metadata_keys": ["file_name", "file_type", "file_size", "creation_date", "last_modified_date", "last_accessed_date"], "excluded_llm_metadata_keys": ["file_name", "file_type", "file_size", "creation_date", "last_modified_date", "last_accessed_date"], "relationships": {"1": {"node_id": "/tmp/ragloom-durable-fixture-servers/docs/heron.txt", "node_type": "4", "metadata": {"file_path": "/tmp/ragloom-durable-fixture-servers/docs/heron.txt", "file_name": "heron.txt", "file_type": "text/plain", "file_size": 111, "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}, "hash": "3745bc810f3afde17668dd7a273304cabea2c30474266e925db76592ba51f4ee", "class_name": "RelatedNodeInfo"}}, "metadata_template": "{key}: {value}", "metadata_separator": "\\n", "text": "The heron stands in the shallows of the north bed, waiting for fish.\\n\\nAt dusk it flies back to the tall pines.", "mimetype": "text/plain", "start_char_idx": 0, "end_char_idx": 110, "text_template": "{metadata_str}\\n\\n{content}", "class_name": "TextNode"}, "__type__": "1"}
3	01a24e8e-7da1-77be-8756-d93303f9defa	docstore/data	{"__data__": {"id_": "01a24e8e-7da1-77be-8756-d93303f9defa", "embedding": null, "metadata": {"file_path": "/tmp/ragloom-durable-fixture-servers/docs/trellis.txt", "file_name": "trellis.txt", "file_type": "text/plain", "file_size": 69, "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}, "excluded_embed_metadata_keys": ["file_name", "file_type", "file_size", "creation_date", "last_modified_date", "last_accessed_date"], "excluded_llm_metadata_keys": ["file_name", "file_type", "file_size", "creation_date", "last_modified_date", "last_accessed_date"], "relationships": {"1": {"node_id": "/tmp/ragloom-durable-fixture-servers/docs/trellis.txt", "node_type": "4", "metadata": {"file_path": "/tmp/ragloom-durable-fixture-servers/docs/trellis.txt", "file_name": "trellis.txt", "file_type": "text/plain", "file_size": 69, "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}, "hash": "8b0f507aca8e32a1834f0bf041fdc19dd6c699cba519cf451be21610f3fef9a4", "class_name": "RelatedNodeInfo"}}, "metadata_template": "{key}: {value}", "metadata_separator": "\\n", "text": "Trellis notes: the roses climb the south fence; prune them in March.", "mimetype": "text/plain", "start_char_idx": 0, "end_char_idx": 68, "text_template": "{metadata_str}\\n\\n{content}", "class_name": "TextNode"}, "__type__": "1"}
4	01a24e8e-7da0-71dc-9890-3236dd603c3e	docstore/metadata	{"doc_hash": "0d8f26a27386a79f94dd5a2e87a6699706abcaee6e3f11812f15edadd9fe0209", "ref_doc_id": "/tmp/ragloom-durable-fixture-servers/docs/boat.md"}
5	01a24e8e-7da0-71dc-9890-323514a56767	docstore/metadata	{"doc_hash": "9596fc943cffd8349a486b73c333c0591052061fc5695b3b876694473a83e02d", "ref_doc_id": "/tmp/ragloom-durable-fixture-servers/docs/heron.txt"}
6	01a24e8e-7da1-77be-8756-d93303f9defa	docstore/metadata	{"doc_hash": "4269c32d214abe4f4ae3a4419b534159e65fd0a1fb86c1a6e5679201e70c9ac1", "ref_doc_id": "/tmp/ragloom-durable-fixture-servers/docs/trellis.txt"}
7	/tmp/ragloom-durable-fixture-servers/docs/boat.md	docstore/ref_doc_info	{"node_ids": ["01a24e8e-7da0-71dc-9890-3236dd603c3e"], "metadata": {"file_path": "/tmp/ragloom-durable-fixture-servers/docs/boat.md", "file_name": "boat.md", "file_type": "text/markdown", "file_size": 103, "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}}
8	/tmp/ragloom-durable-fixture-servers/docs/heron.txt	docstore/ref_doc_info	{"node_ids": ["01a24e8e-7da0-71dc-9890-323514a56767"], "metadata": {"file_path": "/tmp/ragloom-durable-fixture-servers/docs/heron.txt", "file_name": "heron.txt", "file_type": "text/plain", "file_size": 111, "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}}
9	/tmp/ragloom-durable-fixture-servers/docs/trellis.txt	docstore/ref_doc_info	{"node_ids": ["01a24e8e-7da1-77be-8756-d93303f9defa"], "metadata": {"file_path": "/tmp/ragloom-durable-fixture-servers/docs/trellis.txt", "file_name": "trellis.txt", "file_type": "text/plain", "file_size": 69, "creation_date": "2026-12-07", "last_modified_date": "2026-01-01"}}
10	/tmp/ragloom-durable-fixture-servers/docs/boat.md	docstore/metadata	{"doc_hash": "4f1efd7dfa03c5075c2c91a114b25e97d0fe67a9cc4bb6fef37d5814ef2db9b3"}
11	/tmp/ragloom-durable-fixture-servers/docs/heron.txt	docstore/metadata	{"doc_hash": "3745bc810f3afde17668dd7a273304cabea2c30474266e925db76592ba51f4ee"}
12	/tmp/ragloom-durable-fixture-servers/docs/trellis.txt	docstore/metadata	{"doc_hash": "8b0f507aca8e32a1834f0bf041fdc19dd6c699cba519cf451be21610f3fef9a4"}
13	/tmp/ragloom-durable-fixture-servers/docs/boat.md	ragloom/files	{"size": 103, "mtime_ns": 1767225600000000000, "docs": ["/tmp/ragloom-durable-fixture-servers/docs/boat.md"]}
14	/tmp/ragloom-durable-fixture-servers/docs/heron.txt	ragloom/files	{"size": 111, "mtime_ns": 1767225600000000000, "docs": ["/tmp/ragloom-durable-fixture-servers/docs/heron.txt"]}
15	/tmp/ragloom-durable-fixture-servers/docs/trellis.txt	ragloom/files	{"size": 69, "mtime_ns": 1767225600000000000, "docs": ["/tmp/ragloom-durable-fixture-servers/docs/trellis.txt"]}
16	manifest	ragloom/manifest	{"format": 2, "source": "/tmp/ragloom-durable-fixture-servers/docs", "settings": {"embed": {"provider": "none"}, "chunk_size": 1024, "chunk_overlap": 200}, "created": "2026-12-07T03:31:30Z", "updated": "2026-12-07T03:31:30Z", "listed_at_ns": 1796614290540619658, "last_ingest": {"files": 3, "files_unchanged": 0, "documents": 3, "unchanged": 0, "ingested": 3, "deleted": 0, "failed_files": 0, "skipped_files": 0, "nodes_written": 3, "nodes_total": 3, "nodes_embedded": 0, "millis": 402, "stages": {"list": 69, "read": 12, "plan": 7, "split": 294, "count": 574, "encode": 0, "write": 16, "write_cpu": 2, "keyword_index": 0, "commit": 0}}}
\.


--
-- Data for Name: data_rl_c02a6e91d7bb_57f659773e3f_indexstore; Type: TABLE DATA; Schema: fixture_v1; Owner: -
--

COPY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore (id, key, namespace, value) FROM stdin;
\.


--
-- Name: data_ragloom_indexes_id_seq; Type: SEQUENCE SET; Schema: fixture_v1; Owner: -
--

SELECT pg_catalog.setval('fixture_v1.data_ragloom_indexes_id_seq', 1, true);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_docstore_id_seq; Type: SEQUENCE SET; Schema: fixture_v1; Owner: -
--

SELECT pg_catalog.setval('fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore_id_seq', 16, true);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_id_seq; Type: SEQUENCE SET; Schema: fixture_v1; Owner: -
--

SELECT pg_catalog.setval('fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_id_seq', 3, true);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_indexstore_id_seq; Type: SEQUENCE SET; Schema: fixture_v1; Owner: -
--

SELECT pg_catalog.setval('fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore_id_seq', 1, false);


--
-- Name: data_ragloom_indexes data_ragloom_indexes:unique_key_namespace; Type: CONSTRAINT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_ragloom_indexes
    ADD CONSTRAINT "data_ragloom_indexes:unique_key_namespace" UNIQUE (key, namespace);


--
-- Name: data_ragloom_indexes data_ragloom_indexes_pkey; Type: CONSTRAINT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_ragloom_indexes
    ADD CONSTRAINT data_ragloom_indexes_pkey PRIMARY KEY (id);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_docstore data_rl_c02a6e91d7bb_57f659773e3f_docstore:unique_key_namespace; Type: CONSTRAINT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore
    ADD CONSTRAINT "data_rl_c02a6e91d7bb_57f659773e3f_docstore:unique_key_namespace" UNIQUE (key, namespace);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_docstore data_rl_c02a6e91d7bb_57f659773e3f_docstore_pkey; Type: CONSTRAINT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore
    ADD CONSTRAINT data_rl_c02a6e91d7bb_57f659773e3f_docstore_pkey PRIMARY KEY (id);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_indexstore data_rl_c02a6e91d7bb_57f659773e3f_indexstore:unique_key_namespa; Type: CONSTRAINT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore
    ADD CONSTRAINT "data_rl_c02a6e91d7bb_57f659773e3f_indexstore:unique_key_namespa" UNIQUE (key, namespace);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_indexstore data_rl_c02a6e91d7bb_57f659773e3f_indexstore_pkey; Type: CONSTRAINT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore
    ADD CONSTRAINT data_rl_c02a6e91d7bb_57f659773e3f_indexstore_pkey PRIMARY KEY (id);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f data_rl_c02a6e91d7bb_57f659773e3f_pkey; Type: CONSTRAINT; Schema: fixture_v1; Owner: -
--

ALTER TABLE ONLY fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f
    ADD CONSTRAINT data_rl_c02a6e91d7bb_57f659773e3f_pkey PRIMARY KEY (id);


--
-- Name: data_ragloom_indexes:idx_key_namespace; Type: INDEX; Schema: fixture_v1; Owner: -
--

CREATE INDEX "data_ragloom_indexes:idx_key_namespace" ON fixture_v1.data_ragloom_indexes USING btree (key, namespace);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_docstore:idx_key_namespace; Type: INDEX; Schema: fixture_v1; Owner: -
--

CREATE INDEX "data_rl_c02a6e91d7bb_57f659773e3f_docstore:idx_key_namespace" ON fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_docstore USING btree (key, namespace);


--
-- Name: data_rl_c02a6e91d7bb_57f659773e3f_indexstore:idx_key_namespace; Type: INDEX; Schema: fixture_v1; Owner: -
--

CREATE INDEX "data_rl_c02a6e91d7bb_57f659773e3f_indexstore:idx_key_namespace" ON fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f_indexstore USING btree (key, namespace);


--
-- Name: rl_c02a6e91d7bb_57f659773e3f_idx; Type: INDEX; Schema: fixture_v1; Owner: -
--

CREATE INDEX rl_c02a6e91d7bb_57f659773e3f_idx ON fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f USING gin (text_search_tsv);


--
-- Name: rl_c02a6e91d7bb_57f659773e3f_idx_1; Type: INDEX; Schema: fixture_v1; Owner: -
--

CREATE INDEX rl_c02a6e91d7bb_57f659773e3f_idx_1 ON fixture_v1.data_rl_c02a6e91d7bb_57f659773e3f USING btree (((metadata_ ->> 'ref_doc_id'::text)));


--
-- PostgreSQL database dump complete
--

\unrestrict F5X1IBczdkv90hhz3OxG5nw9XdN5MduZATMSjuCA1YZpcLTxyhWIZyniei0hjF2


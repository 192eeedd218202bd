import Foundation
import TandemCore
import TandemStore

/// The OpenAPI 3.1 description served at `/openapi.json`, built from the route table so every
/// served operation is described. Later issues extend the component schemas.
enum OpenAPIDocument {
    static func build(routes: [DatabaseRoute]) -> JSONValue {
        var paths = JSONObject()
        for route in routes.sorted(by: { $0.operation < $1.operation }) {
            let databases = route.databases.map(\.rawValue).sorted()
            var operation: JSONObject = [
                "operationId": .string(route.method.lowercased() + "_" + route.operation.replacingOccurrences(of: "/", with: "_")),
                "summary": .string(route.summary),
                "tags": [.string(String(route.operation.split(separator: "/")[0]))],
                "parameters": .array([
                    ["name": "container", "in": "path", "required": true, "schema": ["type": "string"]],
                    ["name": "environment", "in": "path", "required": true, "schema": ["type": "string", "enum": ["development", "production"]]],
                ] + (databases.isEmpty ? [] : [
                    ["name": "database", "in": "path", "required": true,
                     "schema": ["type": "string", "enum": .array(databases.map(JSONValue.string))]],
                ])),
                "responses": responses(success: route.responseSchema),
            ]
            if let request = route.requestSchema {
                operation["requestBody"] = ["required": true, "content": ["application/json": ["schema": ref(request)]]]
            }
            // Routes without a database segment are Tandem's own (`/tandem/1/...`).
            let path = databases.isEmpty ? "/tandem/1/{container}/{environment}/\(route.operation)"
                : "/database/1/{container}/{environment}/{database}/\(route.operation)"
            var methods = paths[path]?.objectValue ?? JSONObject()
            methods[route.method.lowercased()] = .object(operation)
            paths[path] = .object(methods)
        }
        paths["/healthz"] = ["get": ["summary": "Readiness: 200 with {\"status\":\"ok\",\"bus\":{\"state\":\"in-process|connected|disconnected\",\"reconnects\":N}} when the store answers a read within 2 s", "security": [],
                                     "responses": ["200": ["description": "Serving"],
                                                   "503": ["description": "The store cannot be read: TRY_AGAIN_LATER with retryAfter",
                                                           "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]]]]]]
        paths["/metrics"] = ["get": ["summary": "Prometheus text: request counts and latency histograms per endpoint, open connections, bus counters",
                                     "security": [], "responses": ["200": ["description": "Metrics", "content": ["text/plain": ["schema": ["type": "string"]]]]]]]
        paths["/openapi.json"] = ["get": ["summary": "This document", "security": [], "responses": ["200": ["description": "OpenAPI 3.1"]]]]
        paths["/upload/1/{token}"] = ["post": [
            "summary": "Upload an asset's bytes to a URL from assets/upload (valid 15 minutes, 50 MiB at most)", "security": [],
            "parameters": [["name": "token", "in": "path", "required": true, "schema": ["type": "string"]]],
            "requestBody": ["required": true, "content": ["application/octet-stream": ["schema": ["type": "string", "format": "binary"]]]],
            "responses": responses(success: "AssetUploadReceipt"),
        ]]
        paths["/assets/1/{container}/{environment}/{database}/{zoneName}/{recordName}/{fieldName}/{checksum}"] = ["get": [
            "summary": "Download an asset (the downloadURL of a record's asset field); needs read access to the record",
            "parameters": .array(["container", "environment", "database", "zoneName", "recordName", "fieldName", "checksum"].map {
                ["name": .string($0), "in": "path", "required": true, "schema": ["type": "string"]]
            }),
            "responses": ["200": ["description": "The bytes", "content": ["application/octet-stream": ["schema": ["type": "string", "format": "binary"]]]],
                          "401": errorResponse, "404": errorResponse, "421": errorResponse],
        ]]
        // Group sessions' journal and preview images (SharePlay GroupSessionJournal; D37, G7, G11).
        let binary: JSONValue = ["application/octet-stream": ["schema": ["type": "string", "format": "binary"]]]
        func pathParameters(_ names: [String]) -> JSONValue {
            .array(names.map { ["name": .string($0), "in": "path", "required": true, "schema": ["type": "string"]] })
        }
        let attachment = OpenAPISchemas.object(["id": OpenAPISchemas.string, "size": OpenAPISchemas.integer, "checksum": OpenAPISchemas.string,
                                                "metadata": OpenAPISchemas.string, "createdAt": OpenAPISchemas.integer])
        paths["/journal/1/{container}/{environment}/{sessionID}"] = ["post": [
            "summary": "Add a journal attachment (at most 100 MiB) as a joined participant (?participantID=…&metadata=…)",
            "parameters": .array(pathParameters(["container", "environment", "sessionID"]).arrayValue! + [
                ["name": "participantID", "in": "query", "required": true, "schema": ["type": "string"]],
                ["name": "metadata", "in": "query", "required": false, "schema": ["type": "string"]],
            ]),
            "requestBody": ["required": true, "content": binary],
            "responses": ["200": ["description": "The attachment", "content": ["application/json": ["schema": OpenAPISchemas.object(["attachment": attachment])]]],
                          "400": errorResponse, "401": errorResponse, "404": errorResponse, "413": errorResponse],
        ]]
        paths["/journal/1/{container}/{environment}/{sessionID}/{attachmentID}"] = ["get": [
            "summary": "A journal attachment's bytes, for a participant of the session",
            "parameters": pathParameters(["container", "environment", "sessionID", "attachmentID"]),
            "responses": ["200": ["description": "The bytes", "content": binary], "401": errorResponse, "404": errorResponse],
        ]]
        paths["/journal/1/{container}/{environment}/preview"] = ["post": [
            "summary": "Store an activity's preview image (at most 1 MiB); returns its checksum",
            "parameters": pathParameters(["container", "environment"]),
            "requestBody": ["required": true, "content": binary],
            "responses": ["200": ["description": "The stored image",
                                  "content": ["application/json": ["schema": OpenAPISchemas.object(["previewImage": OpenAPISchemas.object([
                                      "checksum": OpenAPISchemas.string, "size": OpenAPISchemas.integer])])]]],
                          "400": errorResponse, "401": errorResponse, "413": errorResponse],
        ]]
        paths["/journal/1/{container}/{environment}/preview/{checksum}"] = ["get": [
            "summary": "A preview image, for members of a conversation whose live session shows it",
            "parameters": pathParameters(["container", "environment", "checksum"]),
            "responses": ["200": ["description": "The image", "content": binary], "401": errorResponse, "404": errorResponse],
        ]]
        return [
            "openapi": "3.1.0",
            "info": ["title": "Tandem", "version": "1",
                     "description": "CloudKit Web Services compatible API of a self-hosted Tandem server. Errors are CloudKit error dictionaries."],
            "servers": [["url": "http://127.0.0.1:8080"]],
            "security": [["bearer": []], ["ckTokens": [], "ckWebAuthToken": []]],
            "paths": .object(paths),
            "components": ["schemas": OpenAPISchemas.all, "securitySchemes": [
                "bearer": ["type": "http", "scheme": "bearer", "description": "A user token from `tandem token create --user`"],
                "ckTokens": ["type": "apiKey", "in": "query", "name": "ckAPIToken", "description": "A container API token"],
                "ckWebAuthToken": ["type": "apiKey", "in": "query", "name": "ckWebAuthToken", "description": "A user token"],
            ]],
        ]
    }

    static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }

    static let errorResponse: JSONValue = ["description": "CloudKit error dictionary", "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]]]

    /// Success plus every whole-request error status, each with the CloudKit error body.
    static func responses(success: String) -> JSONValue {
        var o: JSONObject = ["200": ["description": "Success; per-item errors appear inside the body",
                                     "content": ["application/json": ["schema": ref(success)]]]]
        let statuses = Set(ServerErrorCode.allCases.map(\.httpStatus)).union([404, 405, 413, 415]).sorted()
        for status in statuses {
            let codes = ServerErrorCode.allCases.filter { $0.httpStatus == status }.map(\.rawValue)
            let description = codes.isEmpty ? "Error (serverErrorCode BAD_REQUEST)" : "Error: " + codes.joined(separator: ", ")
            o[String(status)] = ["description": .string(description), "content": ["application/json": ["schema": ref("Error")]]]
        }
        return .object(o)
    }
}

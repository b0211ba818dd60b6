package io.oncestream.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * An exactly-once stream job: read Kafka topics, filter and map each record with CEL, and
 * upsert the result into a Cassandra table, with no record lost or applied twice.
 */
@Group(StreamJob.GROUP)
@Version(StreamJob.VERSION)
@Kind("StreamJob")
@Plural("streamjobs")
@Singular("streamjob")
@ShortNames("sj")
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Batch", jsonPath = ".status.batchId", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Lag", jsonPath = ".status.lag", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Lag-Seconds", jsonPath = ".status.lagSeconds", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Rate", jsonPath = ".status.rates.inputRecordsPerSecond",
        type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
@ValidationRule(value = "size(self.metadata.name) <= " + StreamJobResources.MAX_NAME_LENGTH,
        message = "metadata.name must have at most " + StreamJobResources.MAX_NAME_LENGTH
                + " characters: the job's StatefulSet labels its pods with <name>-<revision hash of up to 10 characters>,"
                + " and a label value has at most 63")
@ValidationRule(value = "self.metadata.name.matches('" + StreamJobResources.NAME_PATTERN + "')",
        message = "metadata.name must start with a lowercase letter and contain only lowercase letters, digits and '-'"
                + " (not ending with '-'): the job's headless Service is named <name>-workers, and a Service name is a"
                + " DNS-1035 label")
public class StreamJob extends CustomResource<StreamJobSpec, StreamJobStatus> implements Namespaced {

    public static final String GROUP = "oncestream.io";
    public static final String VERSION = "v1alpha1";
}
